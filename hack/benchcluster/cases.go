package main

import (
	"fmt"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The annotations that hack/cluster/kwok.yaml reads from a pod.
const (
	annotationExitCode  = "kwok.jobkit.dev/exit-code"
	annotationFailEvery = "kwok.jobkit.dev/fail-every"
	// failExitCode is the exit code of the failing pods of a failures-N case; the
	// podFailurePolicy fails their index on it.
	failExitCode = 42
	failEvery    = 10
)

// jobCase is one shape of the benchmark: Jobs Jobs created at once, each of
// Completions pods all running in parallel.
type jobCase struct {
	Name        string
	Jobs        int
	Completions int32
	Indexed     bool
	// Failures: Indexed, and every tenth index (0, 10, ...) fails with exit code 42,
	// which a podFailurePolicy rule turns into FailIndex (backoffLimitPerIndex 1,
	// maxFailedIndexes just enough): the Job ends Failed, reason FailedIndexes, once
	// the other indexes have succeeded, and no pod is retried.
	Failures bool
}

// The largest case: issue 37's 10,000 Jobs at once and 100,000 pods, in one Job or
// over many (kwok's nodes take a million pods each, hack/cluster/kwok.yaml).
const (
	maxJobs = 10000
	maxPods = 100000
)

// parseCase reads a case name: nonindexed-N, indexed-N, failures-N or small-JxN
// (J Jobs of N pods each at once).
func parseCase(name string) (jobCase, error) {
	kind, size, ok := strings.Cut(name, "-")
	if !ok {
		return jobCase{}, fmt.Errorf("case %q: want nonindexed-N, indexed-N, failures-N or small-JxN", name)
	}
	c := jobCase{Name: name, Jobs: 1}
	count := size
	switch kind {
	case "nonindexed":
	case "indexed":
		c.Indexed = true
	case "failures":
		c.Indexed, c.Failures = true, true
	case "small":
		jobs, n, ok := strings.Cut(size, "x")
		if !ok {
			return jobCase{}, fmt.Errorf("case %q: want small-JxN, J Jobs of N pods", name)
		}
		j, err := strconv.Atoi(jobs)
		if err != nil || j < 1 || j > maxJobs {
			return jobCase{}, fmt.Errorf("case %q: Jobs %q: want an integer from 1 to %d", name, jobs, maxJobs)
		}
		c.Jobs, count = j, n
	default:
		return jobCase{}, fmt.Errorf("case %q: kind %q: want nonindexed, indexed, failures or small", name, kind)
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 || n > maxPods {
		return jobCase{}, fmt.Errorf("case %q: pods %q: want an integer from 1 to %d", name, count, maxPods)
	}
	if c.Jobs*n > maxPods {
		return jobCase{}, fmt.Errorf("case %q: %d Jobs of %d pods: want at most %d pods in all", name, c.Jobs, n, maxPods)
	}
	c.Completions = int32(n)
	return c, nil
}

// failedIndexes is how many indexes of a failures case fail: 0, 10, 20, ... below
// Completions.
func (c jobCase) failedIndexes() int32 {
	if !c.Failures {
		return 0
	}
	return (c.Completions + failEvery - 1) / failEvery
}

// Pods is the number of pods the case creates in all.
func (c jobCase) Pods() int { return c.Jobs * int(c.Completions) }

// want is what the status of each Job of the case says once finished.
type want struct {
	Succeeded, Failed int32
	Condition         batchv1.JobConditionType
	Reason            string
}

func (c jobCase) want() want {
	if c.Failures {
		f := c.failedIndexes()
		return want{Succeeded: c.Completions - f, Failed: f, Condition: batchv1.JobFailed, Reason: batchv1.JobReasonFailedIndexes}
	}
	return want{Succeeded: c.Completions, Condition: batchv1.JobComplete, Reason: batchv1.JobReasonCompletionsReached}
}

// job is Job i of the case in namespace, handed to the controller managedBy (empty:
// the Kubernetes Job controller), its pods on node.
func (c jobCase) job(i int, namespace, managedBy, node string) *batchv1.Job {
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s-%d", c.Name, i),
			Namespace: namespace,
			Labels:    map[string]string{"jobkit.dev/bench": c.Name},
		},
		Spec: batchv1.JobSpec{
			Completions:  ptr.To(c.Completions),
			Parallelism:  ptr.To(c.Completions),
			BackoffLimit: ptr.To[int32](6),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"jobkit.dev/bench": c.Name}},
				Spec: corev1.PodSpec{
					RestartPolicy:                 corev1.RestartPolicyNever,
					NodeName:                      node,
					TerminationGracePeriodSeconds: ptr.To[int64](0),
					Containers:                    []corev1.Container{{Name: "main", Image: "registry.invalid/fake:1"}},
				},
			},
		},
	}
	if managedBy != "" {
		j.Spec.ManagedBy = ptr.To(managedBy)
	}
	if c.Indexed {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	}
	if c.Failures {
		j.Spec.BackoffLimit = nil
		j.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
		j.Spec.MaxFailedIndexes = ptr.To(c.failedIndexes())
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action:      batchv1.PodFailurePolicyActionFailIndex,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{failExitCode}},
		}}}
		j.Spec.Template.Annotations = map[string]string{
			annotationExitCode:  strconv.Itoa(failExitCode),
			annotationFailEvery: strconv.Itoa(failEvery),
		}
	}
	return j
}
