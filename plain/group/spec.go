package group

import (
	"errors"
	"slices"
	"strconv"

	"github.com/jobkit/jobkit/plain/fielderr"
	"github.com/jobkit/jobkit/plain/internal/fieldcheck"
)

// Spec is the part of a JobSet's spec the group rules read.
type Spec struct {
	// Name is the group's name (metadata.name), the prefix of child names.
	Name string
	// GenerateName is metadata.generateName. Validate reads it when Name is
	// empty (a spec checked before the API server names it): the names it
	// checks then begin with the longest name the API server generates from
	// it.
	GenerateName string
	// Roles are spec.replicatedJobs, in order.
	Roles []Role
	// SuccessPolicy is spec.successPolicy; nil means All over every role.
	SuccessPolicy *SuccessPolicy
	// FailurePolicy is spec.failurePolicy; nil fails the group on any failure.
	FailurePolicy *FailurePolicy
	// StartupOrder is spec.startupPolicy.startupPolicyOrder.
	StartupOrder StartupOrder
	// Coordinator is spec.coordinator, nil for none.
	Coordinator *Coordinator
	// Subdomain is spec.network.subdomain; "" means the group's name.
	Subdomain string
	// TTLSecondsAfterFinished is spec.ttlSecondsAfterFinished.
	TTLSecondsAfterFinished *int32
	// ManagedBy is spec.managedBy, "" when unset.
	ManagedBy string
	// ExclusiveTopology is the group's annotation
	// alpha.jobset.sigs.k8s.io/exclusive-topology ("" when unset): the node
	// label of the domains that each hold one child ([Spec.Exclusive]).
	// NodeSelectorStrategy is set when the group also has the annotation
	// alpha.jobset.sigs.k8s.io/node-selector (its value does not matter).
	ExclusiveTopology    string
	NodeSelectorStrategy bool
	// VolumeClaims are the templates of spec.volumeClaimPolicies, policy by
	// policy, in order.
	VolumeClaims []VolumeClaim
	// Finished says the group has finished (Completed or Failed): not a
	// spec field but the one fact of the status that [ValidateUpdate] reads,
	// of the old spec, to refuse resizing a finished group.
	Finished bool
	// FeatureGates are the JobSet feature gates the spec is validated under,
	// as JobSet's webhook checks its alpha fields (v0.12): a gate set false
	// refuses its feature; a gate absent or true allows it, so a nil map
	// checks none (the gates of jobkit's own kinds). [Validate] reads
	// "InPlaceRestart" (failurePolicy.restartStrategy InPlaceRestart) and
	// "RestartJob" (the rule actions RestartJob and
	// RestartJobAndIgnoreMaxRestarts); [ValidateUpdate] reads
	// "ElasticJobSet" (an Indexed role's parallelism and completions
	// changed) from the new spec. Like Finished, not a spec field.
	FeatureGates map[string]bool
}

// gateOff reports whether gate is set, and set false, in s.FeatureGates.
func (s *Spec) gateOff(gate string) bool {
	on, set := s.FeatureGates[gate]
	return set && !on
}

// The names of JobSet's feature gates Spec.FeatureGates reads.
const (
	gateInPlaceRestart = "InPlaceRestart"
	gateRestartJob     = "RestartJob"
	gateElastic        = "ElasticJobSet"
)

// ControllerName is the managedBy value reserved for JobSet's own controller.
const ControllerName = "jobset.sigs.k8s.io/jobset-controller"

// HandledBy reports whether the controller named controller handles the group:
// its spec.managedBy names that controller, or is unset and controller is
// JobSet's own (ControllerName), as JobSet decides. The one rule of "this group
// is ours" for groups with JobSet's managedBy.
func (s *Spec) HandledBy(controller string) bool {
	if s.ManagedBy == "" {
		return controller == ControllerName
	}
	return s.ManagedBy == controller
}

// Limits JobSet's API enforces.
const (
	// maxDependsOn is the largest number of items in a role's dependsOn.
	maxDependsOn = 5
	// maxRuleNameLength is the longest failure policy rule name.
	maxRuleNameLength = 128
	// maxManagedByLength is the longest managedBy value.
	maxManagedByLength = 63
	// maxNameLength is the longest child name and pod hostname (a DNS label).
	maxNameLength = 63
)

// The values Validate accepts, in JobSet's order.
var (
	validActions          = []Action{FailJobSet, RestartJobSet, RestartJobSetAndIgnoreMaxRestarts, RestartJob, RestartJobAndIgnoreMaxRestarts}
	validRestartStrategy  = []RestartStrategy{Recreate, BlockingRecreate, InPlaceRestart}
	validOperators        = []Operator{All, Any}
	validStartupOrders    = []StartupOrder{AnyOrder, InOrder}
	validDependsOnStatus  = []DependsOnStatus{DependsOnReady, DependsOnComplete}
	validJobFailureReason = []string{"BackoffLimitExceeded", "DeadlineExceeded", "FailedIndexes", "MaxFailedIndexesExceeded", "PodFailurePolicy"}
)

// Errors a caller can test with errors.Is.
var (
	// ErrInvalid is wrapped by every validation error of this package.
	ErrInvalid = errors.New("invalid value")
	// ErrNotFinished: a finished group was expected.
	ErrNotFinished = errors.New("the group has not finished")
	// ErrIndexOutOfRange: a child's index cannot hold a per-index counter.
	ErrIndexOutOfRange = errors.New("index out of the range of per-index restart counters [0, 1024)")
)

// Errors is every error [Validate] found, each a [fielderr.Error]: the rule a spec
// breaks, the field in the API's names ("failurePolicy.rules[0].name"), the bad
// value, and what is wrong. errors.Is(errs, ErrInvalid) holds.
type Errors []*fielderr.Error

// Error renders every error, after the package name.
func (es Errors) Error() string { return fieldcheck.Join("group", es) }

// Is makes errors.Is(errs, ErrInvalid) true.
func (es Errors) Is(target error) bool { return target == ErrInvalid && len(es) > 0 }

// Unwrap returns the errors, so errors.As finds each *fielderr.Error.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// patternError is the error of message pattern j of rule i, which regexp rejected
// with err: the same from Compile as from Validate.
func patternError(i, j int, s string, err error) *fielderr.Error {
	return invalid(rulePath(i)+".onJobFailureMessagePatterns["+strconv.Itoa(j)+"]", s, "must be a valid RE2 regular expression: "+err.Error())
}

func rulePath(i int) string { return "failurePolicy.rules[" + strconv.Itoa(i) + "]" }

// Default returns a copy of spec with JobSet's defaults (CRD schema and webhook)
// filled in: role GroupName "default", SuccessPolicy {All}, StartupOrder
// AnyOrder, RestartStrategy Recreate, rule names "failurePolicyRule<i>",
// Subdomain the group's name, and each volume claim's WhenDeleted "Delete". Replicas cannot be told unset from zero here: the
// caller applies its default of 1. spec is not modified; slices that change are
// copied.
func Default(spec Spec) Spec {
	spec.Roles = slices.Clone(spec.Roles)
	for i := range spec.Roles {
		if spec.Roles[i].GroupName == "" {
			spec.Roles[i].GroupName = defaultGroupName
		}
	}
	if spec.SuccessPolicy == nil {
		spec.SuccessPolicy = &SuccessPolicy{Operator: All}
	} else if spec.SuccessPolicy.Operator == "" {
		p := *spec.SuccessPolicy
		p.Operator = All
		spec.SuccessPolicy = &p
	}
	if spec.StartupOrder == "" {
		spec.StartupOrder = AnyOrder
	}
	if spec.FailurePolicy != nil {
		p := *spec.FailurePolicy
		if p.RestartStrategy == "" {
			p.RestartStrategy = Recreate
		}
		p.Rules = slices.Clone(p.Rules)
		for i := range p.Rules {
			if p.Rules[i].Name == "" {
				p.Rules[i].Name = "failurePolicyRule" + strconv.Itoa(i)
			}
		}
		spec.FailurePolicy = &p
	}
	if spec.Subdomain == "" {
		spec.Subdomain = spec.Name
	}
	spec.VolumeClaims = slices.Clone(spec.VolumeClaims)
	for k := range spec.VolumeClaims {
		if spec.VolumeClaims[k].WhenDeleted == "" {
			spec.VolumeClaims[k].WhenDeleted = "Delete"
		}
	}
	return spec
}
