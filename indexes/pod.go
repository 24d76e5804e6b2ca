package indexes

import (
	"fmt"
	"math"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/jobkit/jobkit/owner"
	plainindexes "github.com/jobkit/jobkit/plain/indexes"
)

// AnnotationError reports a pod annotation that is missing or cannot be used.
type AnnotationError struct {
	// Pod is "namespace/name" of the pod.
	Pod string
	// Key is the annotation key.
	Key string
	// Value is the annotation value as found ("" when missing).
	Value string
	// Reason says what is wrong.
	Reason string
}

// Error names the pod, the annotation, its value and the reason.
func (e *AnnotationError) Error() string {
	return fmt.Sprintf("pod %s: annotation %s=%q: %s", e.Pod, e.Key, e.Value, e.Reason)
}

func podKey(pod *corev1.Pod) string { return pod.Namespace + "/" + pod.Name }

// PodIndex returns the completion index of a pod of an Indexed owner of kind, read
// from the annotation kind.IndexKey() only (batch.kubernetes.io/job-completion-index
// for a batch/v1 Job; as the upstream controller does, the label of the same name is
// informational). A missing, non-numeric, negative or larger than MaxInt32 value
// yields Unknown and an *AnnotationError naming the value, so callers can log it;
// such a pod is a stray to remove. It does not allocate unless it returns an error.
func PodIndex(kind owner.Kind, pod *corev1.Pod) (int, error) {
	key := kind.IndexKey()
	v, ok := pod.Annotations[key]
	if !ok {
		return plainindexes.Unknown, &AnnotationError{Pod: podKey(pod), Key: key, Reason: "missing"}
	}
	x, ok := parseIndexAnnotation(v)
	if !ok {
		return plainindexes.Unknown, &AnnotationError{Pod: podKey(pod), Key: key, Value: v, Reason: "not a non-negative 32-bit integer"}
	}
	return x, nil
}

// podIndex is PodIndex without the error, for loops over many pods.
func podIndex(key string, pod *corev1.Pod) int {
	x, ok := parseIndexAnnotation(pod.Annotations[key])
	if !ok {
		return plainindexes.Unknown
	}
	return x
}

// parseIndexAnnotation accepts what strconv.ParseInt accepts (upstream reads the
// annotation with strconv.Atoi, so "+3" is 3) within [0, MaxInt32]. Values that are
// plainly not numbers are turned away before ParseInt, whose error allocates.
func parseIndexAnnotation(v string) (int, bool) {
	digits := v
	if digits != "" && (digits[0] == '+' || digits[0] == '-') {
		digits = digits[1:]
	}
	if digits == "" {
		return plainindexes.Unknown, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return plainindexes.Unknown, false
		}
	}
	x, err := strconv.ParseInt(v, 10, 32)
	if err != nil || x < 0 {
		return plainindexes.Unknown, false
	}
	return int(x), true
}

// PodFailureCount reads the failure-count annotations of a pod of an owner of kind
// (kind.FailureCountKey and kind.IgnoredFailureCountKey). A missing annotation
// counts 0. A value that is not a non-negative 32-bit integer counts 0 and is reported in
// the returned error (an *AnnotationError, or two joined), while the other annotation is
// still read.
func PodFailureCount(kind owner.Kind, pod *corev1.Pod) (plainindexes.FailureCount, error) {
	failed, err1 := readCount(pod, kind.FailureCountKey())
	ignored, err2 := readCount(pod, kind.IgnoredFailureCountKey())
	fc := plainindexes.FailureCount{Failed: failed, Ignored: ignored}
	switch {
	case err1 != nil && err2 != nil:
		return fc, fmt.Errorf("%w; %w", err1, err2)
	case err1 != nil:
		return fc, err1
	case err2 != nil:
		return fc, err2
	}
	return fc, nil
}

func readCount(pod *corev1.Pod, key string) (int32, error) {
	v, ok := pod.Annotations[key]
	if !ok {
		return 0, nil
	}
	x, err := strconv.ParseInt(v, 10, 32)
	if err != nil || x < 0 || x > math.MaxInt32 {
		return 0, &AnnotationError{Pod: podKey(pod), Key: key, Value: v, Reason: "not a non-negative 32-bit integer"}
	}
	return int32(x), nil
}
