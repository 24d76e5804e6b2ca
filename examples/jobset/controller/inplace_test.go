package controller_test

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/jobkit/jobkit/examples/jobset/api/v1alpha2"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// A leader and two workers restarted in place on the API server, through the
// example controller under its own role with InPlaceRestart: the test plays
// the agents, writing each pod's attempt annotation. Every pod on attempt 0
// lifts the barrier at 0; one pod on attempt 1 sets the previous attempt to
// 0 and keeps the current one; every pod on 1 moves the current attempt to
// 1. No child Job and no pod is replaced, and status.restarts stays 0.
func TestInPlaceRestartOnTheAPIServer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.stopJobSetController()
	e.inPlace = true
	e.startJobSetController(e.jobSetWrites)
	inPlace := func(r v1alpha2.ReplicatedJob) v1alpha2.ReplicatedJob {
		s := &r.Template.Spec
		s.BackoffLimit, s.PodReplacementPolicy = ptr.To[int32](math.MaxInt32), ptr.To(batchv1.Failed)
		s.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		return r
	}
	js := e.jobSet("ip", inPlace(role("leader", 1, 1)), inPlace(role("workers", 2, 1)))
	js.Spec.FailurePolicy = &v1alpha2.FailurePolicy{MaxRestarts: 3, RestartStrategy: v1alpha2.InPlaceRestart}
	e.create(js)

	pods := func() []corev1.Pod {
		var list corev1.PodList
		if err := k8s.List(t.Context(), &list, client.InNamespace(e.ns), client.MatchingLabels{plaingroup.LabelJobSetName: "ip"}); err != nil {
			t.Fatalf("listing pods: %v", err)
		}
		return list.Items
	}
	report := func(p *corev1.Pod, attempt int32) {
		t.Helper()
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, plaingroup.AnnotationInPlaceRestartAttempt, strconv.Itoa(int(attempt)))
		if err := k8s.Patch(t.Context(), p, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.Fatalf("the agent of pod %s reporting attempt %d: %v", p.Name, attempt, err)
		}
	}
	barrier := func(what string, prev, cur *int32) {
		t.Helper()
		poll.Eventually(t, what, func() (bool, string) {
			s := e.get("ip").Status
			return fmt.Sprint(ptr.Deref(s.PreviousInPlaceRestartAttempt, -1), ptr.Deref(s.CurrentInPlaceRestartAttempt, -1)) ==
					fmt.Sprint(ptr.Deref(prev, -1), ptr.Deref(cur, -1)),
				fmt.Sprintf("previous %v, current %v", s.PreviousInPlaceRestartAttempt, s.CurrentInPlaceRestartAttempt)
		})
	}
	uids := func() map[string]types.UID {
		out := map[string]types.UID{}
		for name, j := range e.jobs() {
			out["job "+name] = j.UID
		}
		for _, p := range pods() {
			out["pod "+p.Name] = p.UID
		}
		return out
	}

	poll.Eventually(t, "three pods", func() (bool, string) { n := len(pods()); return n == 3, fmt.Sprintf("%d pods", n) })
	all := pods()
	for i := range all {
		report(&all[i], 0)
	}
	barrier("the barrier lifted at attempt 0", nil, ptr.To[int32](0))
	before := uids()

	report(&all[0], 1)
	barrier("previous attempt 0 once one pod reports 1", ptr.To[int32](0), ptr.To[int32](0))
	for i := 1; i < len(all); i++ {
		report(&all[i], 1)
	}
	barrier("the barrier lifted at attempt 1", ptr.To[int32](0), ptr.To[int32](1))

	if after := uids(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("objects after the restart %v, want the same as before %v (none replaced)", after, before)
	}
	if s := e.get("ip").Status; s.Restarts != 0 || s.TerminalState != "" {
		t.Errorf("status = %+v, want no restart counted and the group running", s)
	}
}
