package runplan_test

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	plaindl "github.com/jobkit/jobkit/plain/deadlines"
	"github.com/jobkit/jobkit/singlepod/podoutcome"
	"github.com/jobkit/jobkit/singlepod/runplan"
)

var now = time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)

const (
	runUID types.UID = "run-1"
	podUID types.UID = "pod-1"
)

// aRun is the run under test: job "unit", created and started an hour ago.
func aRun(state runplan.State, edits ...func(*runplan.Run)) runplan.Run {
	r := runplan.Run{UID: runUID, Name: "run-1", JobName: "unit", State: state,
		Created: now.Add(-time.Hour), StartTime: now.Add(-time.Hour)}
	if state == runplan.StatePending {
		r.PendingTime, r.HadPod, r.Description = now.Add(-time.Hour), true, "Job triggered."
	}
	for _, e := range edits {
		e(&r)
	}
	return r
}

// peer is another run of the namespace.
func peer(uid types.UID, job string, state runplan.State, created time.Time, edits ...func(*runplan.Run)) runplan.Run {
	r := runplan.Run{UID: uid, Name: string(uid), JobName: job, State: state, Created: created, StartTime: created}
	for _, e := range edits {
		e(&r)
	}
	return r
}

// aPod is the run's pod, created 10 minutes ago, in phase.
func aPod(phase corev1.PodPhase, edits ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "run-1", Namespace: "ci", UID: podUID,
			CreationTimestamp: metav1.NewTime(now.Add(-10 * time.Minute)),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "examples.jobkit.dev/v1alpha1", Kind: "RunJob",
				Name: "run-1", UID: runUID, Controller: ptr.To(true)}},
		},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "test"}}},
		Status: corev1.PodStatus{Phase: phase},
	}
	for _, e := range edits {
		e(p)
	}
	return p
}

func startedAgo(d time.Duration) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Status.StartTime = ptr.To(metav1.NewTime(now.Add(-d))) }
}

func terminating(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.NewTime(now.Add(-time.Second))) }

func reason(r string) func(*corev1.Pod) { return func(p *corev1.Pod) { p.Status.Reason = r } }

func terminated(code int32, reason string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "test", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, FinishedAt: metav1.NewTime(now.Add(-time.Minute))}}}}
	}
}

// opts are plank's defaults: 5m unscheduled, 10m pending, 48h running, 3
// revivals.
func opts() podoutcome.Options {
	return podoutcome.Options{MaxRevivals: podoutcome.DefaultMaxRevivals, Timeouts: plaindl.DefaultTimeouts()}
}

func input(run runplan.Run, pod *corev1.Pod, peers ...runplan.Run) runplan.Input {
	return runplan.Input{Run: run, Pod: pod, Peers: peers, Outcome: opts(), Now: now}
}

func noCreationTime(p *corev1.Pod) { p.CreationTimestamp = metav1.Time{} }
