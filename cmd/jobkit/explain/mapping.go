package explain

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
)

// ErrBadMapping is wrapped by the errors of Mapping.Validate and ParseMappingFile:
// a target that is not a field of a batch/v1 Job, or a source that is not a field
// path or a literal.
var ErrBadMapping = errors.New("bad field mapping")

// Mapping says where an owner of another kind keeps the fields of a batch/v1 Job:
// each key is a target, a field path of a Job (spec.completions,
// spec.successPolicy.rules[0].succeededCount, status, status.failed), or
// backoff.base and backoff.max (the owner's own pod failure backoff, durations such
// as "30s"); each value is the source, a field path of the object (spec.workers,
// spec.successPolicy.succeededCount), a literal written "=VALUE" (=Indexed, =0,
// =true; JSON when it parses as JSON, else a string), alternatives separated by
// "|" of which the first present is read (spec.parallelism|spec.workers: the
// owner's parallelism, else its workers), or "" for a Job field the owner does
// not have.
//
// A Mapping adds to the default one, the batch/v1 names: every spec field that
// plan reads is read from the field of the same name, and the status from status.
// A target replaces the default of its field, and a target inside a field (under
// spec.successPolicy) replaces the default of that whole field.
//
// The nil Mapping is the default one.
type Mapping map[string]string

// specFields are the fields of a Job's spec that plan reads, by their JSON names.
var specFields = []string{"activeDeadlineSeconds", "backoffLimit", "backoffLimitPerIndex",
	"completionMode", "completions", "managedBy", "maxFailedIndexes", "parallelism",
	"podFailurePolicy", "podReplacementPolicy", "selector", "successPolicy", "suspend", "template"}

// Validate checks every target and source.
func (m Mapping) Validate() error {
	var errs []error
	for _, target := range slices.Sorted(maps.Keys(m)) {
		if err := checkTarget(target); err != nil {
			errs = append(errs, err)
			continue
		}
		source := m[target]
		if source == "" {
			continue
		}
		for alt := range strings.SplitSeq(source, "|") {
			if strings.HasPrefix(alt, "=") {
				continue
			}
			if _, err := parsePath(alt); err != nil {
				errs = append(errs, fmt.Errorf("%w: %s: source %q: %v", ErrBadMapping, target, source, err))
			}
		}
	}
	return errors.Join(errs...)
}

func checkTarget(target string) error {
	p, err := parsePath(target)
	if err != nil {
		return fmt.Errorf("%w: target %q: %v", ErrBadMapping, target, err)
	}
	switch {
	case target == "backoff.base" || target == "backoff.max" || p[0].key == "status":
		return nil
	case p[0].key == "spec" && len(p) > 1 && slices.Contains(specFields, p[1].key):
		return nil
	}
	return fmt.Errorf("%w: target %q: not a field of a batch/v1 Job that explain reads (want spec.FIELD with FIELD one of %s; status or status.FIELD; backoff.base or backoff.max)",
		ErrBadMapping, target, strings.Join(specFields, ", "))
}

// entry is one target of the effective mapping with its source.
type entry struct {
	target, source string
	path           []segment
}

// entries returns the default mapping with m applied, parents before the fields
// inside them.
func (m Mapping) entries() []entry {
	all := map[string]string{"status": "status"}
	for _, f := range specFields {
		all["spec."+f] = "spec." + f
	}
	for target := range m {
		for def := range all {
			if def == target || strings.HasPrefix(target, def+".") || strings.HasPrefix(target, def+"[") {
				delete(all, def)
			}
		}
	}
	for target, source := range m {
		all[target] = source
	}
	out := make([]entry, 0, len(all))
	for target, source := range all {
		p, _ := parsePath(target)
		out = append(out, entry{target: target, source: source, path: p})
	}
	slices.SortFunc(out, func(a, b entry) int {
		if len(a.path) != len(b.path) {
			return len(a.path) - len(b.path)
		}
		return strings.Compare(a.target, b.target)
	})
	return out
}

// sourceOf names where the Job field path comes from, for an error: "" when it
// comes from the field of the same name.
func (m Mapping) sourceOf(path string) string {
	best := ""
	for target := range m {
		if (path == target || strings.HasPrefix(path, target+".") || strings.HasPrefix(path, target+"[")) && len(target) > len(best) {
			best = target
		}
	}
	if best == "" || m[best] == best {
		return ""
	}
	if m[best] == "" {
		return "unset"
	}
	if strings.HasPrefix(m[best], "=") {
		return "literal " + m[best]
	}
	return m[best] + strings.TrimPrefix(path, best)
}

// jobShaped builds, from obj, the object a batch/v1 Job would be: its spec and
// status sections by the mapping, and the owner's own backoff.
func (m Mapping) jobShaped(obj map[string]any) (map[string]any, plainbackoff.Policy, error) {
	out := map[string]any{}
	var policy plainbackoff.Policy
	for _, e := range m.entries() {
		v, ok, err := valueOf(obj, e.source)
		if err != nil {
			return nil, policy, err
		}
		if !ok {
			continue
		}
		if e.target == "backoff.base" || e.target == "backoff.max" {
			d, err := durationOf(v)
			if err != nil {
				return nil, policy, fmt.Errorf("%w: %s (read as %s): %v", ErrBadOwner, e.source, e.target, err)
			}
			if e.target == "backoff.base" {
				policy.Base = d
			} else {
				policy.Max = d
			}
			continue
		}
		set(out, e.path, deepCopy(v))
	}
	return out, policy, nil
}

// valueOf reads source in obj: the first of its alternatives (separated by "|")
// that is a literal or a field present in obj. Validate has checked the paths.
func valueOf(obj map[string]any, source string) (any, bool, error) {
	if source == "" {
		return nil, false, nil
	}
	for alt := range strings.SplitSeq(source, "|") {
		if lit, ok := strings.CutPrefix(alt, "="); ok {
			var v any
			if err := json.Unmarshal([]byte(lit), &v); err != nil {
				v = lit
			}
			return v, true, nil
		}
		p, _ := parsePath(alt)
		if v, ok, err := lookup(obj, p); ok || err != nil {
			return v, ok, err
		}
	}
	return nil, false, nil
}

// durationOf reads a duration of the object, such as "30s".
func durationOf(v any) (time.Duration, error) {
	s, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf("want a duration such as \"30s\", got %s", valueText(v))
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("want a positive duration such as \"30s\", got %q", s)
	}
	return d, nil
}

// MappingFile is what ParseMappingFile reads: the owner's kind, its tracking
// finalizer and the field mapping, as `jobkit explain --mapping FILE` takes them.
type MappingFile struct {
	// OwnerKind is GROUP/VERSION/KIND, as --owner-kind.
	OwnerKind string `json:"ownerKind,omitempty"`
	// OwnerFinalizer is the tracking finalizer, as --owner-finalizer.
	OwnerFinalizer string `json:"ownerFinalizer,omitempty"`
	// Fields is the Mapping.
	Fields Mapping `json:"fields,omitempty"`
}

// ParseMappingFile reads a MappingFile from YAML or JSON, refusing unknown keys,
// and validates its Fields. name names the source in errors.
func ParseMappingFile(name string, data []byte) (MappingFile, error) {
	var f MappingFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return f, fmt.Errorf("%w: %s: %v", ErrBadMapping, name, err)
	}
	if err := f.Fields.Validate(); err != nil {
		return f, fmt.Errorf("%s: %w", name, err)
	}
	return f, nil
}

// segment is one step of a field path: a key, then an optional list index.
type segment struct {
	key   string
	index int // -1: none
}

// parsePath reads a.b[0].c.
func parsePath(s string) ([]segment, error) {
	if s == "" {
		return nil, errors.New("empty field path")
	}
	var out []segment
	for part := range strings.SplitSeq(s, ".") {
		seg := segment{key: part, index: -1}
		if open := strings.IndexByte(part, '['); open >= 0 {
			n, err := strconv.Atoi(strings.TrimSuffix(part[open+1:], "]"))
			if !strings.HasSuffix(part, "]") || err != nil || n < 0 {
				return nil, fmt.Errorf("%q: want KEY or KEY[N] with N a list index", part)
			}
			seg = segment{key: part[:open], index: n}
		}
		if seg.key == "" {
			return nil, fmt.Errorf("empty field name in %q", s)
		}
		out = append(out, seg)
	}
	return out, nil
}

// lookup returns the value at p in obj, and whether there is one; a value on
// the way that is neither absent nor of the kind the path needs is an error
// naming the path to it.
func lookup(obj map[string]any, p []segment) (any, bool, error) {
	var cur any = obj
	for i, seg := range p {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false, fmt.Errorf("%w: %s: want an object, got %s", ErrBadOwner, pathText(p[:i]), valueText(cur))
		}
		if cur, ok = m[seg.key]; !ok || cur == nil {
			return nil, false, nil
		}
		if seg.index >= 0 {
			l, ok := cur.([]any)
			if !ok {
				return nil, false, fmt.Errorf("%w: %s: want a list, got %s", ErrBadOwner, pathText(p[:i+1]), valueText(cur))
			}
			if seg.index >= len(l) {
				return nil, false, nil
			}
			cur = l[seg.index]
		}
	}
	return cur, true, nil
}

// pathText writes p back as a.b[0].c.
func pathText(p []segment) string {
	parts := make([]string, len(p))
	for i, seg := range p {
		parts[i] = seg.key
		if seg.index >= 0 {
			parts[i] += "[" + strconv.Itoa(seg.index) + "]"
		}
	}
	return strings.Join(parts, ".")
}

// set writes v at p in obj, making the maps and lists on the way; it modifies obj.
func set(obj map[string]any, p []segment, v any) {
	cur := obj
	for i, seg := range p {
		last := i == len(p)-1
		if seg.index < 0 {
			if last {
				cur[seg.key] = v
				return
			}
			next, ok := cur[seg.key].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[seg.key] = next
			}
			cur = next
			continue
		}
		l, _ := cur[seg.key].([]any)
		for len(l) <= seg.index {
			l = append(l, nil)
		}
		cur[seg.key] = l
		if last {
			l[seg.index] = v
			return
		}
		next, ok := l[seg.index].(map[string]any)
		if !ok {
			next = map[string]any{}
			l[seg.index] = next
		}
		cur = next
	}
}

// deepCopy copies the maps and lists of v, so that setting a field inside a
// mapped value never writes into the object read.
func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = deepCopy(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = deepCopy(x)
		}
		return out
	}
	return v
}
