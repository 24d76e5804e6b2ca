package explain

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/jobkit/jobkit/plan"
)

// ErrBadOwner is wrapped by the errors of WorkloadOf: a field of the object that
// does not decode as the batch/v1 Job field of the same name.
var ErrBadOwner = errors.New("bad owner object")

// jobShapedSpec is what WorkloadOf reads of an object's spec: the fields of
// plan.Spec, named and typed as in a batchv1.JobSpec.
type jobShapedSpec struct {
	Parallelism           *int32                        `json:"parallelism"`
	Completions           *int32                        `json:"completions"`
	CompletionMode        *batchv1.CompletionMode       `json:"completionMode"`
	BackoffLimit          *int32                        `json:"backoffLimit"`
	BackoffLimitPerIndex  *int32                        `json:"backoffLimitPerIndex"`
	MaxFailedIndexes      *int32                        `json:"maxFailedIndexes"`
	PodFailurePolicy      *batchv1.PodFailurePolicy     `json:"podFailurePolicy"`
	SuccessPolicy         *batchv1.SuccessPolicy        `json:"successPolicy"`
	PodReplacementPolicy  *batchv1.PodReplacementPolicy `json:"podReplacementPolicy"`
	Suspend               *bool                         `json:"suspend"`
	ActiveDeadlineSeconds *int64                        `json:"activeDeadlineSeconds"`
	Selector              *metav1.LabelSelector         `json:"selector"`
	Template              *corev1.PodTemplateSpec       `json:"template"`
	ManagedBy             *string                       `json:"managedBy"`
}

// WorkloadOf reads an object of any kind as a plan.Workload: its metadata
// (namespace, name, uid, deletionTimestamp), the fields of its spec that plan reads
// (completions, parallelism, completionMode, backoffLimit, backoffLimitPerIndex,
// maxFailedIndexes, podFailurePolicy, successPolicy, podReplacementPolicy, suspend,
// activeDeadlineSeconds, selector, template and managedBy) and its status as a
// batchv1.JobStatus, each where m says (by default, and with a nil m, under the
// batch/v1 name), and the owner's own backoff (Workload.Backoff) when m maps
// backoff.base or backoff.max. Other fields are ignored; a value that does not decode as the Job
// field it is read as is an error wrapping ErrBadOwner that names the object's
// field, the Job field and the value; a bad m is an error wrapping ErrBadMapping.
//
// This is the conversion `jobkit explain --owner-kind` uses, with --map and
// --mapping. A resource whose fields cannot be mapped one by one is converted by
// its own function (the one its controller uses), then given to Explain.
//
// The Workload points into nothing of obj: obj is not modified.
func WorkloadOf(obj *unstructured.Unstructured, m Mapping) (plan.Workload, error) {
	what := obj.GetKind() + " " + qualified(obj.GetNamespace(), obj.GetName())
	if err := m.Validate(); err != nil {
		return plan.Workload{}, err
	}
	shaped, policy, err := m.jobShaped(obj.Object)
	if err != nil {
		return plan.Workload{}, fmt.Errorf("%s: %w", what, err)
	}
	spec, err := decodeSection[jobShapedSpec](shaped, "spec", m.sourceOf)
	if err != nil {
		return plan.Workload{}, fmt.Errorf("%s: %w", what, err)
	}
	status, err := decodeSection[batchv1.JobStatus](shaped, "status", m.sourceOf)
	if err != nil {
		return plan.Workload{}, fmt.Errorf("%s: %w", what, err)
	}
	return plan.Workload{
		Namespace: obj.GetNamespace(),
		Name:      obj.GetName(),
		UID:       obj.GetUID(),
		Deleting:  obj.GetDeletionTimestamp() != nil,
		Spec: plan.Spec{
			Parallelism:           spec.Parallelism,
			Completions:           spec.Completions,
			CompletionMode:        spec.CompletionMode,
			BackoffLimit:          spec.BackoffLimit,
			BackoffLimitPerIndex:  spec.BackoffLimitPerIndex,
			MaxFailedIndexes:      spec.MaxFailedIndexes,
			PodFailurePolicy:      spec.PodFailurePolicy,
			SuccessPolicy:         spec.SuccessPolicy,
			PodReplacementPolicy:  spec.PodReplacementPolicy,
			Suspend:               spec.Suspend,
			ActiveDeadlineSeconds: spec.ActiveDeadlineSeconds,
			Selector:              spec.Selector,
			Template:              spec.Template,
			ManagedBy:             spec.ManagedBy,
		},
		Status:  *status,
		Backoff: policy,
	}, nil
}

// decodeSection decodes obj[section] (an object, or absent) as a T. On an error
// it finds the first field, in name order, that does not decode alone, so that
// the error names it with its value, and with its source (source returns where
// a Job field path was read from, "" for the field of that name).
func decodeSection[T any](obj map[string]any, section string, source func(string) string) (*T, error) {
	into := new(T)
	v, ok := obj[section]
	if !ok || v == nil {
		return into, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: %s: want an object, got %s", ErrBadOwner, section, valueText(v))
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadOwner, section, err)
	}
	err = json.Unmarshal(raw, into)
	if err == nil {
		return into, nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		one, _ := json.Marshal(map[string]any{k: m[k]})
		fieldErr := json.Unmarshal(one, new(T))
		if fieldErr == nil {
			continue
		}
		path := section + "." + k
		var te *json.UnmarshalTypeError
		if errors.As(fieldErr, &te) {
			if te.Field != "" && te.Field != k {
				path = section + "." + te.Field
			}
			return nil, fmt.Errorf("%w: %s: want %s, got %s (%s)", ErrBadOwner, fieldName(path, source), te.Type, te.Value, valueText(m[k]))
		}
		return nil, fmt.Errorf("%w: %s: %s: %v", ErrBadOwner, fieldName(path, source), valueText(m[k]), fieldErr)
	}
	return nil, fmt.Errorf("%w: %s: %v", ErrBadOwner, section, err)
}

// fieldName names a Job field path in an error, with the object's field it was
// read from when that has another name.
func fieldName(path string, source func(string) string) string {
	if from := source(path); from != "" {
		return from + " (read as " + path + ")"
	}
	return path
}

// valueText writes a value of the object briefly, for an error.
func valueText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return strings.TrimSpace(s)
}
