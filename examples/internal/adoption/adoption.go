package adoption

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// MatchingJobs returns the Jobs of jobs, in order, that are in pod's namespace, are
// not being deleted, and whose selector matches pod's labels: the candidates to adopt
// an orphan. Jobs without a selector, or with an invalid or empty one, match nothing.
// Cost: O(len(jobs) × selector size).
func MatchingJobs(pod *corev1.Pod, jobs []*batchv1.Job) []*batchv1.Job {
	if pod == nil {
		return nil
	}
	var out []*batchv1.Job
	set := labels.Set(pod.Labels)
	for _, job := range jobs {
		if job == nil || job.Namespace != pod.Namespace || job.DeletionTimestamp != nil || job.Spec.Selector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
		if err != nil || sel.Empty() {
			continue
		}
		if sel.Matches(set) {
			out = append(out, job)
		}
	}
	return out
}
