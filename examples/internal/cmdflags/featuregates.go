package cmdflags

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// FeatureGates is the value of --feature-gates: a comma-separated list of
// Name=true|false over the gates a command knows, in the syntax of the
// Kubernetes components and of JobSet's controller (k8s.io/component-base's
// flag). A gate not named keeps its default; an unknown name or a value that
// is not a boolean is an error that names them. It implements flag.Value.
type FeatureGates struct {
	defaults map[string]bool
	set      map[string]bool
}

// NewFeatureGates returns the gates of defaults (name: default value), none
// set yet.
func NewFeatureGates(defaults map[string]bool) *FeatureGates {
	return &FeatureGates{defaults: defaults, set: map[string]bool{}}
}

// Enabled reports whether gate name is on: as set, else its default.
func (g *FeatureGates) Enabled(name string) bool {
	if v, ok := g.set[name]; ok {
		return v
	}
	return g.defaults[name]
}

// Known lists the gates' names, sorted, for the flag's help.
func (g *FeatureGates) Known() []string {
	names := make([]string, 0, len(g.defaults))
	for n := range g.defaults {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// String renders the gates set, sorted (flag.Value).
func (g *FeatureGates) String() string {
	if g == nil {
		return ""
	}
	var parts []string
	for n, v := range g.set {
		parts = append(parts, n+"="+strconv.FormatBool(v))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// Set parses one --feature-gates value (flag.Value); a later value adds to
// the earlier ones.
func (g *FeatureGates) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, value, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		if !ok {
			return fmt.Errorf("missing bool value for %s", name)
		}
		if _, known := g.defaults[name]; !known {
			return fmt.Errorf("unrecognized feature gate: %s (known: %s)", name, strings.Join(g.Known(), ", "))
		}
		b, err := strconv.ParseBool(strings.TrimSpace(value))
		if err != nil {
			return fmt.Errorf("invalid value of %s=%s, err: %w", name, value, err)
		}
		g.set[name] = b
	}
	return nil
}
