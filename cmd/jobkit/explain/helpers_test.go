package explain_test

import (
	"fmt"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/plan"
)

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

const jobUID = types.UID("job-uid")

// newJob returns a Job ns/job with a selector on its UID, as the API server
// writes it, started at t0.
func newJob(completions, parallelism int32, indexed bool) *batchv1.Job {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job", UID: jobUID},
		Spec: batchv1.JobSpec{
			Completions: ptr.To(completions),
			Parallelism: ptr.To(parallelism),
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{batchv1.ControllerUidLabel: string(jobUID)}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{batchv1.ControllerUidLabel: string(jobUID)}},
				Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main"}}},
			},
		},
		Status: batchv1.JobStatus{StartTime: &metav1.Time{Time: t0}, Ready: ptr.To[int32](0), Terminating: ptr.To[int32](0)},
	}
	if indexed {
		job.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	}
	return job
}

// newPod returns pod i of job, owned, with the finalizer, in phase (index i when
// the Job is Indexed).
func newPod(job *batchv1.Job, i int, phase corev1.PodPhase) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         job.Namespace,
			Name:              fmt.Sprintf("%s-%d", job.Name, i),
			UID:               types.UID(fmt.Sprintf("pod-%d", i)),
			CreationTimestamp: metav1.Time{Time: t0.Add(time.Duration(i) * time.Second)},
			Labels:            map[string]string{batchv1.ControllerUidLabel: string(job.UID)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID,
				Controller: ptr.To(true)}},
			Finalizers: []string{finalizers.Name},
		},
		Spec:   corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main"}}},
		Status: corev1.PodStatus{Phase: phase},
	}
	if job.Spec.CompletionMode != nil && *job.Spec.CompletionMode == batchv1.IndexedCompletion {
		pod.Annotations = map[string]string{batchv1.JobCompletionIndexAnnotation: strconv.Itoa(i)}
	}
	return pod
}

// workloadOf is plan.JobWorkload(job), or nil for a nil job.
func workloadOf(job *batchv1.Job) *plan.Workload {
	if job == nil {
		return nil
	}
	return plan.JobWorkload(job)
}
