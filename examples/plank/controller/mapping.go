package controller

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobkit/jobkit/examples/plank/api/v1alpha1"
	plainconc "github.com/jobkit/jobkit/plain/concurrency"
	"github.com/jobkit/jobkit/singlepod/podoutcome"
	"github.com/jobkit/jobkit/singlepod/runplan"
)

func (r *Reconciler) limits() plainconc.Limits {
	return plainconc.Limits{MaxPending: r.cfg.MaxPending, Queues: r.cfg.Queues, RetryAfter: r.cfg.RetryAfter}
}

// lockKeys are the locks a start takes: one per limit that counts other runs.
func (r *Reconciler) lockKeys(rj *v1alpha1.RunJob) []string {
	keys := make([]string, 0, 3)
	if r.cfg.MaxPending > 0 {
		keys = append(keys, "pending/"+rj.Namespace)
	}
	if rj.Spec.MaxConcurrency > 0 {
		keys = append(keys, "job/"+rj.Namespace+"/"+rj.Spec.JobName)
	}
	if rj.Spec.QueueName != "" {
		keys = append(keys, "queue/"+rj.Namespace+"/"+rj.Spec.QueueName)
	}
	return keys
}

func (r *Reconciler) outcomeOptions(rj *v1alpha1.RunJob) podoutcome.Options {
	t := *r.cfg.DefaultTimeouts
	if s := rj.Spec.Timeouts; s != nil {
		t.Unscheduled = durationOr(s.Unscheduled, t.Unscheduled)
		t.Pending = durationOr(s.Pending, t.Pending)
		t.Running = durationOr(s.Running, t.Running)
	}
	maxRevivals := podoutcome.DefaultMaxRevivals
	if rj.Spec.MaxRevivals != nil {
		maxRevivals = int(*rj.Spec.MaxRevivals)
	}
	return podoutcome.Options{ErrorOnEviction: rj.Spec.ErrorOnEviction, MaxRevivals: maxRevivals, Timeouts: t}
}

func durationOr(d *metav1.Duration, def time.Duration) time.Duration {
	if d == nil {
		return def
	}
	return d.Duration
}

// runOf maps a RunJob onto runplan's plain run.
func runOf(rj *v1alpha1.RunJob) runplan.Run {
	return runplan.Run{
		UID:            rj.UID,
		Name:           rj.Name,
		JobName:        rj.Spec.JobName,
		Queue:          rj.Spec.QueueName,
		MaxConcurrency: int(rj.Spec.MaxConcurrency),
		DedupeKey:      rj.Spec.DedupeKey,
		State:          runplan.State(rj.Status.State),
		Description:    rj.Status.Description,
		Created:        rj.CreationTimestamp.Time,
		StartTime:      timeOf(rj.Status.StartTime),
		PendingTime:    timeOf(rj.Status.PendingTime),
		Completed:      rj.Status.CompletionTime != nil,
		HadPod:         rj.Status.PodName != "",
		Revivals:       podoutcome.Revivals{Count: int(rj.Status.Revivals), Pod: rj.Status.RevivedPodUID},
	}
}

func timeOf(t *metav1.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
}

func podName(rj *v1alpha1.RunJob) string {
	if rj.Status.PodName != "" {
		return rj.Status.PodName
	}
	return rj.Name
}

// newPod returns the pod of rj: the run's name and namespace, its pod spec
// (restartPolicy Never unless set), LabelRunUID and a controller reference.
func newPod(rj *v1alpha1.RunJob) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            podName(rj),
			Namespace:       rj.Namespace,
			Labels:          map[string]string{LabelRunUID: string(rj.UID)},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rj, gvk)},
		},
		Spec: *rj.Spec.PodSpec.DeepCopy(),
	}
	if pod.Spec.RestartPolicy == "" {
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	}
	return pod
}
