package plan_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
)

// msgWorkload is a NonIndexed owner of one pod, started a minute ago, handled by
// "example.com/ctl", in terms any kind can give.
func msgWorkload(mods ...func(*plan.Workload)) *plan.Workload {
	w := &plan.Workload{
		Namespace: "ns", Name: "run", UID: "run-uid",
		Spec: plan.Spec{
			Parallelism: ptr.To[int32](1),
			Completions: ptr.To[int32](1),
			Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "c", Image: "i"}},
			}},
			ManagedBy: ptr.To("example.com/ctl"),
		},
		Status: batchv1.JobStatus{StartTime: ptr.To(metav1.NewTime(exampleNow.Add(-time.Minute)))},
	}
	for _, m := range mods {
		m(w)
	}
	return w
}

func indexedMsg(perIndex int32, maxFailed *int32) func(*plan.Workload) {
	return func(w *plan.Workload) {
		w.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		w.Spec.BackoffLimitPerIndex = ptr.To(perIndex)
		w.Spec.MaxFailedIndexes = maxFailed
	}
}

// msgPod is a pod of w controlled by an owner of kind, tracked by kind's finalizer.
func msgPod(kind owner.Kind, w *plan.Workload, name string, phase corev1.PodPhase, ix int) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: w.Namespace, UID: types.UID(name),
			Finalizers:        []string{kind.Finalizer},
			OwnerReferences:   []metav1.OwnerReference{kind.NewControllerRef(&metav1.ObjectMeta{Name: w.Name, UID: w.UID})},
			CreationTimestamp: metav1.NewTime(exampleNow.Add(-time.Minute)),
		},
		Status: corev1.PodStatus{Phase: phase},
	}
	if ix >= 0 {
		pod.Annotations = map[string]string{kind.IndexKey(): fmt.Sprint(ix)}
	}
	return pod
}

// TestMessagesNameTheOwnerKind goes through every message the plan writes: a batch/v1
// Job reads the upstream controller's words exactly, an owner of another kind reads
// its own kind where upstream says "Job".
func TestMessagesNameTheOwnerKind(t *testing.T) {
	type got struct {
		condition string // the message of the first condition change
		event     string // "Reason: message" of the first event, the plan's or Settle's
		reason    string // the reason of the first deletion, or the skip
	}
	tests := []struct {
		name     string
		workload func() *plan.Workload
		pods     func(kind owner.Kind, w *plan.Workload) []*corev1.Pod
		want     func(kind string) got // kind is "Job" or "TrainingJob"
	}{
		{
			name: "backoff limit exceeded",
			workload: func() *plan.Workload {
				return msgWorkload(func(w *plan.Workload) { w.Spec.BackoffLimit = ptr.To[int32](0) })
			},
			pods: func(k owner.Kind, w *plan.Workload) []*corev1.Pod {
				return []*corev1.Pod{msgPod(k, w, "failed", corev1.PodFailed, -1)}
			},
			want: func(kind string) got {
				m := kind + " has reached the specified backoff limit"
				return got{condition: m, event: "BackoffLimitExceeded: " + m}
			},
		},
		{
			name: "active deadline",
			workload: func() *plan.Workload {
				return msgWorkload(func(w *plan.Workload) { w.Spec.ActiveDeadlineSeconds = ptr.To[int64](10) })
			},
			want: func(kind string) got {
				m := kind + " was active longer than specified deadline"
				return got{condition: m, event: "DeadlineExceeded: " + m}
			},
		},
		{
			name: "finishing stops the running pods",
			workload: func() *plan.Workload {
				return msgWorkload(func(w *plan.Workload) { w.Spec.ActiveDeadlineSeconds = ptr.To[int64](10) })
			},
			pods: func(k owner.Kind, w *plan.Workload) []*corev1.Pod {
				return []*corev1.Pod{msgPod(k, w, "running", corev1.PodRunning, -1)}
			},
			want: func(kind string) got {
				return got{condition: kind + " was active longer than specified deadline", reason: noun(kind) + " finishing: DeadlineExceeded"}
			},
		},
		{
			name:     "maximal number of failed indexes",
			workload: func() *plan.Workload { return msgWorkload(indexedMsg(0, ptr.To[int32](0))) },
			pods: func(k owner.Kind, w *plan.Workload) []*corev1.Pod {
				return []*corev1.Pod{msgPod(k, w, "failed", corev1.PodFailed, 0)}
			},
			want: func(kind string) got {
				m := kind + " has exceeded the specified maximal number of failed indexes"
				return got{condition: m, event: "MaxFailedIndexesExceeded: " + m}
			},
		},
		{
			name:     "failed indexes",
			workload: func() *plan.Workload { return msgWorkload(indexedMsg(0, nil)) },
			pods: func(k owner.Kind, w *plan.Workload) []*corev1.Pod {
				return []*corev1.Pod{msgPod(k, w, "failed", corev1.PodFailed, 0)}
			},
			want: func(kind string) got {
				m := kind + " has failed indexes"
				return got{condition: m, event: "FailedIndexes: " + m}
			},
		},
		{
			name:     "suspended",
			workload: func() *plan.Workload { return msgWorkload(func(w *plan.Workload) { w.Spec.Suspend = ptr.To(true) }) },
			pods: func(k owner.Kind, w *plan.Workload) []*corev1.Pod {
				return []*corev1.Pod{msgPod(k, w, "running", corev1.PodRunning, -1)}
			},
			want: func(kind string) got {
				return got{condition: kind + " suspended", event: "Suspended: " + kind + " suspended", reason: noun(kind) + " suspended"}
			},
		},
		{
			name: "resumed",
			workload: func() *plan.Workload {
				return msgWorkload(func(w *plan.Workload) {
					w.Status.StartTime = nil
					w.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue, Reason: "JobSuspended", Message: "Job suspended"}}
				})
			},
			want: func(kind string) got {
				return got{condition: kind + " resumed", event: "Resumed: " + kind + " resumed"}
			},
		},
		{
			name:     "completed",
			workload: func() *plan.Workload { return msgWorkload(func(w *plan.Workload) { w.Status.Succeeded = 1 }) },
			want: func(kind string) got {
				return got{condition: "Reached expected number of succeeded pods", event: "Completed: " + kind + " completed"}
			},
		},
		{
			name:     "too many succeeded pods",
			workload: func() *plan.Workload { return msgWorkload(func(w *plan.Workload) { w.Status.Succeeded = 2 }) },
			want: func(string) got {
				return got{condition: "Reached expected number of succeeded pods", event: "TooManySucceededPods: Too many succeeded pods running after completion count reached"}
			},
		},
		{
			name: "finished",
			workload: func() *plan.Workload {
				return msgWorkload(func(w *plan.Workload) {
					w.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
				})
			},
			want: func(kind string) got { return got{reason: noun(kind) + " finished"} },
		},
	}
	for _, kind := range []owner.Kind{owner.BatchJob, trainingKind} {
		for _, tt := range tests {
			t.Run(kind.Kind+"/"+tt.name, func(t *testing.T) {
				w := tt.workload()
				var pods []*corev1.Pod
				if tt.pods != nil {
					pods = tt.pods(kind, w)
				}
				p, err := plan.Compute(plan.Input{Workload: w, Pods: pods, Owner: kind, ControllerName: "example.com/ctl", ExpectationsSatisfied: true, Now: exampleNow})
				require.NoError(t, err)
				var g got
				if len(p.Conditions) > 0 {
					g.condition = p.Conditions[0].Message
				}
				events := p.Events
				if len(events) == 0 {
					removed := sets.New[types.UID]()
					for _, a := range p.RemoveFinalizers {
						removed.Insert(a.Pod.UID)
					}
					events = p.Settle(removed).Events
				}
				if len(events) > 0 {
					g.event = events[0].Reason + ": " + events[0].Message
				}
				switch {
				case len(p.Delete) > 0:
					g.reason = p.Delete[0].Reason
				case p.Skip != "":
					g.reason = p.Skip
				}
				assert.Equal(t, tt.want(kind.Kind), g, "plan:\n%s", p)
			})
		}
	}
}

// noun is how the plan's own reasons name the owner.
func noun(kind string) string {
	if kind == "Job" {
		return "job"
	}
	return kind
}

// TestBatchJobMessagesAreUpstreams pins the texts of a batch/v1 Job to the upstream
// controller's, word for word.
func TestBatchJobMessagesAreUpstreams(t *testing.T) {
	upstream := map[string]string{
		"backoff":   "Job has reached the specified backoff limit",
		"deadline":  "Job was active longer than specified deadline",
		"maxFailed": "Job has exceeded the specified maximal number of failed indexes",
		"failedIx":  "Job has failed indexes",
	}
	cases := map[string]*plan.Workload{
		"backoff":   msgWorkload(func(w *plan.Workload) { w.Spec.BackoffLimit = ptr.To[int32](0) }),
		"deadline":  msgWorkload(func(w *plan.Workload) { w.Spec.ActiveDeadlineSeconds = ptr.To[int64](10) }),
		"maxFailed": msgWorkload(indexedMsg(0, ptr.To[int32](0))),
		"failedIx":  msgWorkload(indexedMsg(0, nil)),
	}
	for name, w := range cases {
		ix := -1
		if w.Spec.CompletionMode != nil {
			ix = 0
		}
		p, err := plan.Compute(plan.Input{Workload: w, Pods: []*corev1.Pod{msgPod(owner.BatchJob, w, "f", corev1.PodFailed, ix)}, ControllerName: "example.com/ctl", ExpectationsSatisfied: true, Now: exampleNow})
		require.NoError(t, err)
		require.NotEmpty(t, p.Conditions, name)
		assert.Equal(t, upstream[name], p.Conditions[0].Message, name)
		s := p.Settle(sets.New[types.UID]("f"))
		require.Len(t, s.Events, 1, name)
		assert.Equal(t, upstream[name], s.Events[0].Message, name)
	}
}
