package ownedpods

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plain/fielderr"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
)

// maxHostname is the length limit of a DNS label: a pod's hostname and a label
// value.
const maxHostname = 63

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// fieldErrors is every validation error of one Input, each naming its field and
// value; errors.As finds each *fielderr.Error.
type fieldErrors []*fielderr.Error

func (es fieldErrors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

func (es fieldErrors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// invalidInput wraps errs as the error Compute returns.
func invalidInput(errs ...*fielderr.Error) error {
	return fmt.Errorf("roles: %w: %w", plan.ErrInvalidJob, fieldErrors(errs))
}

// groupSpec is the Workload as plain/group sees it: one child per role.
func groupSpec(w *Workload) plaingroup.Spec {
	spec := plaingroup.Spec{
		Name:          w.Name,
		Roles:         make([]plaingroup.Role, len(w.Roles)),
		SuccessPolicy: w.SuccessPolicy,
		FailurePolicy: w.FailurePolicy,
		StartupOrder:  w.StartupOrder,
	}
	for i := range w.Roles {
		r := &w.Roles[i]
		spec.Roles[i] = plaingroup.Role{
			Name:        r.Name,
			Replicas:    1,
			Parallelism: ptr.Deref(r.Spec.Parallelism, 1),
			Completions: r.Spec.Completions,
			DependsOn:   r.DependsOn,
			NonIndexed:  r.Spec.CompletionMode == nil || *r.Spec.CompletionMode != batchv1.IndexedCompletion,
			// The in-place restart rules on a role's spec apply as to a child's.
			BackoffLimit:         r.Spec.BackoffLimit,
			PodReplacementPolicy: string(ptr.Deref(r.Spec.PodReplacementPolicy, "")),
		}
	}
	return spec
}

// validate checks what Compute cannot plan and returns the defaulted group
// spec with its compiled failure policy. The role specs themselves are checked
// by plan.Compute, role by role.
func validate(in *Input) (plaingroup.Spec, *plaingroup.Matcher, error) {
	w := in.Workload
	if w == nil {
		return plaingroup.Spec{}, nil, invalidInput(&fielderr.Error{Type: fielderr.Required, Field: "Input.Workload"})
	}
	var errs []*fielderr.Error
	if in.ControllerName == "" {
		errs = append(errs, &fielderr.Error{Type: fielderr.Required, Field: "Input.ControllerName",
			Detail: "the controller names itself: there is no default"})
	}
	if w.Name == "" {
		errs = append(errs, &fielderr.Error{Type: fielderr.Required, Field: "Workload.Name"})
	}
	switch k := in.Owner; {
	case k == (owner.Kind{}):
		// plan reads the zero Kind as a batch/v1 Job's.
		errs = append(errs, &fielderr.Error{Type: fielderr.Required, Field: "Input.Owner",
			Detail: "the owner's kind and tracking finalizer: the pods' controller reference names it"})
	case k.Group == batchv1.GroupName && k.Kind == "Job":
		errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: "Input.Owner", BadValue: k.String(),
			Detail: "a batch/v1 Job runs one role: use plan.Compute"})
	default:
		if err := k.Validate(); err != nil {
			errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: "Input.Owner", BadValue: k.String(), Detail: err.Error()})
		}
	}
	spec := groupSpec(w)
	// The group rules check child and pod names in JobSet's shape
	// (<group>-<role>-<job>-<pod>); the names here are shorter and are checked
	// below, so Validate sees no name.
	named := spec
	named.Name = ""
	for _, e := range plaingroup.Validate(&named) {
		if e.Field == "metadata.name" {
			continue
		}
		c := *e
		c.Field = ourField(c.Field)
		c.Detail = strings.NewReplacer("ReplicatedJob", "role", "replicatedJob", "role").Replace(c.Detail)
		errs = append(errs, &c)
	}
	for i := range w.Roles {
		errs = append(errs, checkRole(w, i)...)
	}
	if p := w.FailurePolicy; p != nil {
		for i, r := range p.Rules {
			if r.Action == plaingroup.RestartJob || r.Action == plaingroup.RestartJobAndIgnoreMaxRestarts {
				errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: "failurePolicy.rules[" + strconv.Itoa(i) + "].action",
					BadValue: string(r.Action), Detail: "not supported: each role is one child, restart the group instead (RestartJobSet)"})
			}
		}
	}
	if len(errs) > 0 {
		return plaingroup.Spec{}, nil, invalidInput(errs...)
	}
	spec = plaingroup.Default(spec)
	m, err := plaingroup.Compile(spec.FailurePolicy)
	if err != nil {
		return plaingroup.Spec{}, nil, fmt.Errorf("roles: %w: %w", plan.ErrInvalidJob, err)
	}
	return spec, m, nil
}

// checkRole checks the name of role i: a DNS label whose pods' hostnames
// (<owner>-<role>-<index>) and the role's name in plan terms (<owner>-<role>)
// fit in 63 characters.
func checkRole(w *Workload, i int) []*fielderr.Error {
	r := &w.Roles[i]
	field := "roles[" + strconv.Itoa(i) + "].name"
	if r.Name == "" {
		return nil // plaingroup.Validate reports it
	}
	if len(r.Name) > maxHostname || !dnsLabel.MatchString(r.Name) {
		return []*fielderr.Error{{Type: fielderr.Invalid, Field: field, BadValue: r.Name,
			Detail: "must be a DNS label (lower case letters, digits and '-', at most 63 characters)"}}
	}
	if w.Name == "" {
		return nil
	}
	longest := w.Name + "-" + r.Name
	if c := r.Spec.Completions; c != nil && *c > 0 && r.Spec.CompletionMode != nil && *r.Spec.CompletionMode == batchv1.IndexedCompletion {
		longest += "-" + strconv.Itoa(int(*c-1))
	}
	if len(longest) > maxHostname {
		return []*fielderr.Error{{Type: fielderr.Invalid, Field: field, BadValue: r.Name,
			Detail: fmt.Sprintf("%q (owner name, role name and last index) must be at most %d characters", longest, maxHostname)}}
	}
	return nil
}

// ourField renames a plain/group field path after this package's types.
func ourField(f string) string {
	if rest, ok := strings.CutPrefix(f, "replicatedJobs"); ok {
		f = "roles" + rest
		f = strings.Replace(f, ".template.spec.", ".spec.", 1)
	}
	return f
}
