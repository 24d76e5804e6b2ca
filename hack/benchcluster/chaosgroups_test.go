package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

func TestGroupPlan(t *testing.T) {
	a, b := groupPlan(7, 36, time.Minute), groupPlan(7, 36, time.Minute)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("groupPlan(7) twice differs (-first +second):\n%s", diff)
	}
	if cmp.Equal(a, groupPlan(8, 36, time.Minute)) {
		t.Error("groupPlan(7) and groupPlan(8) are the same")
	}
	seen := map[groupShape]int{}
	for _, g := range a {
		seen[g.Shape]++
		if g.Workers < 1 || g.Pods < 1 || g.At < 0 || g.At > time.Minute {
			t.Errorf("%s: workers %d, pods %d, at %v", g.Name, g.Workers, g.Pods, g.At)
		}
		if g.FailRestarts > 0 && (g.FailIndex < 0 || g.FailIndex >= g.Workers) {
			t.Errorf("%s: fails worker %d of %d", g.Name, g.FailIndex, g.Workers)
		}
		if (g.Shape == gScale) != (g.gvr() == gvrUpstreamJobSets) {
			t.Errorf("%s: API %v", g.Name, g.gvr())
		}
		if g.Shape == gScale && (g.ScaleTo < 1 || g.ScaleTo == g.Workers || g.ActAfter <= 0) {
			t.Errorf("%s: scaled from %d to %d after %v", g.Name, g.Workers, g.ScaleTo, g.ActAfter)
		}
		if g.Shape == gRestartJob && (g.FailRestarts < 1 || g.FailRestarts >= g.MaxRestarts) {
			t.Errorf("%s: RestartJob fails %d times under maxRestarts %d: the group would fail", g.Name, g.FailRestarts, g.MaxRestarts)
		}
	}
	for _, s := range groupShapes {
		if seen[s] != 4 {
			t.Errorf("shape %s: %d groups, want 4 of 36", s, seen[s])
		}
	}
}

func TestGroupExpectations(t *testing.T) {
	tests := []struct {
		g            chaosGroup
		wantFailed   bool
		wantRestarts int32
		wantWorkers  int32
	}{
		{chaosGroup{Shape: gRecreate, Workers: 3, FailRestarts: 2, MaxRestarts: 2}, false, 2, 3},
		{chaosGroup{Shape: gBlocking, Workers: 2, FailRestarts: 3, MaxRestarts: 2}, true, 2, 2},
		{chaosGroup{Shape: gRestartJob, Workers: 2, FailRestarts: 2, MaxRestarts: 3}, false, 0, 2},
		{chaosGroup{Shape: gScale, Workers: 4, ScaleTo: 1}, false, 0, 1},
		{chaosGroup{Shape: gSuspend, Workers: 1}, false, 0, 1},
		{chaosGroup{Shape: gFailGroup, Workers: 2, FailRestarts: 1, MaxRestarts: 2}, true, 0, 2},
	}
	for _, tt := range tests {
		if f, r, w := tt.g.wantFailed(), tt.g.wantRestarts(), tt.g.wantWorkers(); f != tt.wantFailed || r != tt.wantRestarts || w != tt.wantWorkers {
			t.Errorf("%s: failed %v, restarts %d, workers %d; want %v, %d, %d", tt.g.Shape, f, r, w, tt.wantFailed, tt.wantRestarts, tt.wantWorkers)
		}
	}
	for g, want := range map[chaosGroup]string{
		{Shape: gBlocking, FailRestarts: 3, MaxRestarts: 2}: "ReachedMaxRestarts",
		{Shape: gFailGroup, FailRestarts: 1}:                "FailJobSetFailurePolicyAction",
		{Shape: gRecreate, FailRestarts: 1, MaxRestarts: 2}: "",
	} {
		if got := g.wantReason(); got != want {
			t.Errorf("%s with %d failures: reason %q, want %q", g.Shape, g.FailRestarts, got, want)
		}
	}
}

// role decodes the replicatedJob i of the JobSet u.
func roleOf(t *testing.T, u *unstructured.Unstructured, i int) jsRole {
	t.Helper()
	roles, _, _ := unstructured.NestedSlice(u.Object, "spec", "replicatedJobs")
	b, err := json.Marshal(roles[i])
	if err != nil {
		t.Fatal(err)
	}
	var r jsRole
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestGroupObject(t *testing.T) {
	g := chaosGroup{Name: "g", Shape: gRecreate, Workers: 3, Pods: 2, LeaderRunFor: time.Second, WorkerRunFor: 2 * time.Second,
		FailIndex: 1, FailRestarts: 2, MaxRestarts: 2}
	u, err := g.object("ns", "kwok-1")
	if err != nil {
		t.Fatal(err)
	}
	if u.GetAPIVersion() != "jobset.examples.jobkit.dev/v1alpha2" || u.GetKind() != "JobSet" || u.GetNamespace() != "ns" {
		t.Errorf("object %s %s in %s", u.GetAPIVersion(), u.GetKind(), u.GetNamespace())
	}
	if b, _ := json.Marshal(u.Object); strings.Contains(string(b), "null") {
		t.Errorf("object holds a null: %s", b)
	}
	if fp, _, _ := unstructured.NestedMap(u.Object, "spec", "failurePolicy"); fp["restartStrategy"] != "Recreate" || fp["maxRestarts"] != float64(2) {
		t.Errorf("failurePolicy %v", fp)
	}
	leader, workers := roleOf(t, u, 0), roleOf(t, u, 1)
	if leader.Name != "leader" || leader.Replicas != 1 || workers.Name != "workers" || workers.Replicas != 3 {
		t.Errorf("roles %s×%d, %s×%d", leader.Name, leader.Replicas, workers.Name, workers.Replicas)
	}
	if a := leader.Template.Spec.Template.Annotations; a[annotationExitCode] != "" || a[annotationRunFor] != "1s" {
		t.Errorf("leader's pod annotations %v: want run-for 1s, no failure", a)
	}
	want := map[string]string{annotationRunFor: "2s", annotationExitCode: "1", annotationFailJobIndex: "1", annotationFailRestarts: "2"}
	if diff := cmp.Diff(want, workers.Template.Spec.Template.Annotations); diff != "" {
		t.Errorf("workers' pod annotations (-want +got):\n%s", diff)
	}
	s := workers.Template.Spec
	if ptr.Deref(s.BackoffLimit, -1) != 0 || ptr.Deref(s.Completions, 0) != 2 || ptr.Deref(s.Parallelism, 0) != 2 ||
		ptr.Deref(s.CompletionMode, "") != batchv1.IndexedCompletion || s.Template.Spec.NodeName != "kwok-1" {
		t.Errorf("workers' Job template %+v", s)
	}

	for _, tt := range []struct {
		g     chaosGroup
		check func(*unstructured.Unstructured) string
	}{
		{chaosGroup{Shape: gRestartJob, FailRestarts: 1, MaxRestarts: 3}, func(u *unstructured.Unstructured) string {
			rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "failurePolicy", "rules")
			if len(rules) != 1 || rules[0].(map[string]any)["action"] != "RestartJob" {
				return "rules " + toJSON(rules)
			}
			return ""
		}},
		{chaosGroup{Shape: gDependsOn, DependsOn: "Complete"}, func(u *unstructured.Unstructured) string {
			if d := roleOf(t, u, 1).DependsOn; len(d) != 1 || d[0]["name"] != "leader" || d[0]["status"] != "Complete" {
				return "dependsOn " + toJSON(d)
			}
			return ""
		}},
		{chaosGroup{Shape: gSuccessAny}, func(u *unstructured.Unstructured) string {
			if sp, _, _ := unstructured.NestedMap(u.Object, "spec", "successPolicy"); sp["operator"] != "Any" {
				return "successPolicy " + toJSON(sp)
			}
			return ""
		}},
		{chaosGroup{Shape: gInPlace}, func(u *unstructured.Unstructured) string {
			s := roleOf(t, u, 1).Template.Spec
			if ptr.Deref(s.PodReplacementPolicy, "") != batchv1.Failed || s.Template.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
				return "in-place template " + toJSON(s)
			}
			return ""
		}},
		{chaosGroup{Shape: gScale, ScaleTo: 2}, func(u *unstructured.Unstructured) string {
			if u.GetAPIVersion() != "jobset.x-k8s.io/v1alpha2" {
				return "apiVersion " + u.GetAPIVersion()
			}
			return ""
		}},
	} {
		tt.g.Name, tt.g.Workers, tt.g.Pods = "g", 2, 1
		u, err := tt.g.object("ns", "n")
		if err != nil {
			t.Fatal(err)
		}
		if msg := tt.check(u); msg != "" {
			t.Errorf("%s: %s", tt.g.Shape, msg)
		}
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// jobSet is a finished JobSet's status for checkGroup.
func jobSet(typ, reason string, restarts, towards int64, jobRestarts, counted []any) *unstructured.Unstructured {
	status := map[string]any{
		"restarts": restarts, "restartsCountTowardsMax": towards, "terminalState": typ,
		"conditions":           []any{map[string]any{"type": typ, "status": "True", "reason": reason}},
		"replicatedJobsStatus": []any{map[string]any{"name": "workers", "jobRestarts": jobRestarts, "jobRestartsCountTowardsMax": counted}},
	}
	return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "g"}, "status": status}}
}

// child is a child Job of group g, its role, index, attempts and condition.
func child(role string, index, attempt, jobAttempt int, cond batchv1.JobConditionType) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: role + "-" + itoa(index) + "-a" + itoa(attempt) + "-j" + itoa(jobAttempt),
		UID: types.UID(role + itoa(index) + itoa(attempt) + itoa(jobAttempt)),
		Labels: map[string]string{labelJobSetName: "g", labelRoleName: role, labelJobIndex: itoa(index),
			labelRestartAttempt: itoa(attempt), labelJobRestart: itoa(jobAttempt)}}}
	if cond != "" {
		j.Status.Conditions = []batchv1.JobCondition{{Type: cond, Status: corev1.ConditionTrue}}
	}
	return j
}

// failedPod is a pod of worker index of group g at the attempts, failed with
// exit code code (kwok's 1, or 137 once deleted while running).
func failedPod(index, attempt, jobAttempt int, code int32) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: types.UID("p" + itoa(index) + itoa(attempt) + itoa(jobAttempt) + itoa(int(code%10))),
			Labels: map[string]string{labelJobSetName: "g", labelRoleName: "workers", labelJobIndex: itoa(index),
				labelRestartAttempt: itoa(attempt), labelJobRestart: itoa(jobAttempt)}},
		Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{
			{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}}},
	}
}

func withUID(j *batchv1.Job, uid types.UID) *batchv1.Job {
	j.UID = uid
	return j
}

func itoa(i int) string { return string(rune('0' + i)) }

func TestCheckGroup(t *testing.T) {
	recreate := chaosGroup{Name: "g", Shape: gRecreate, Workers: 2, Pods: 1, FailIndex: 1, FailRestarts: 1, MaxRestarts: 2}
	over := recreate
	over.FailRestarts = 3
	restartJob := chaosGroup{Name: "g", Shape: gRestartJob, Workers: 2, Pods: 1, FailIndex: 0, FailRestarts: 1, MaxRestarts: 3}
	done := batchv1.JobComplete
	tests := []struct {
		name    string
		g       chaosGroup
		js      *unstructured.Unstructured
		history []*batchv1.Job // in the order the watch saw them
		failed  []*corev1.Pod  // the pods the watch saw failed
		left    []*batchv1.Job
		want    []string // substrings of the problems, in order; none: passes
	}{{
		name: "one restart, the new attempt completed",
		g:    recreate, js: jobSet("Completed", "AllJobsCompleted", 1, 1, nil, nil),
		failed: []*corev1.Pod{failedPod(1, 0, 0, 1)},
		left:   []*batchv1.Job{child("leader", 0, 1, 0, done), child("workers", 0, 1, 0, done), child("workers", 1, 1, 0, done)},
	}, {
		name: "a child of the old attempt left, a restart counted twice",
		g:    recreate, js: jobSet("Completed", "AllJobsCompleted", 2, 2, nil, nil),
		failed: []*corev1.Pod{failedPod(1, 0, 0, 1)},
		left:   []*batchv1.Job{child("leader", 0, 1, 0, done), child("workers", 0, 2, 0, done), child("workers", 1, 2, 0, done)},
		want:   []string{"restarts 2, restartsCountTowardsMax 2; the plan says 1 restarts, the history 1", "child leader-0-a1-j0 of attempt 1 left"},
	}, {
		name: "a child created twice",
		g:    recreate, js: jobSet("Completed", "AllJobsCompleted", 1, 1, nil, nil),
		history: []*batchv1.Job{child("workers", 1, 0, 0, batchv1.JobFailed), child("workers", 0, 1, 0, ""), withUID(child("workers", 0, 1, 0, ""), "again")},
		failed:  []*corev1.Pod{failedPod(1, 0, 0, 1)},
		left:    []*batchv1.Job{child("leader", 0, 1, 0, done), child("workers", 0, 1, 0, done), child("workers", 1, 1, 0, done)},
		want:    []string{"two child Jobs of workers 0, attempt 1, job attempt 0"},
	}, {
		name:    "the children deleted at the end failed: no failure of the plan",
		g:       chaosGroup{Name: "g", Shape: gSuccessAny, Workers: 2, Pods: 1},
		js:      jobSet("Completed", "AllJobsCompleted", 0, 0, nil, nil),
		history: []*batchv1.Job{child("leader", 0, 0, 0, done), child("workers", 0, 0, 0, batchv1.JobFailed), child("workers", 1, 0, 0, batchv1.JobFailed)},
		failed:  []*corev1.Pod{failedPod(0, 0, 0, 137), failedPod(1, 0, 0, 137)},
		left:    []*batchv1.Job{child("leader", 0, 0, 0, done)},
	}, {
		name:   "a pod of a group without failures failed",
		g:      chaosGroup{Name: "g", Shape: gSuccessAny, Workers: 2, Pods: 1},
		js:     jobSet("Completed", "AllJobsCompleted", 0, 0, nil, nil),
		failed: []*corev1.Pod{failedPod(1, 0, 0, 1)},
		left:   []*batchv1.Job{child("leader", 0, 0, 0, done)},
		want:   []string{"pods failed by kwok in attempts [0]; want none"},
	}, {
		name:   "FailJobSet failed the group at once",
		g:      chaosGroup{Name: "g", Shape: gFailGroup, Workers: 2, Pods: 1, FailIndex: 1, FailRestarts: 1, MaxRestarts: 2},
		js:     jobSet("Failed", "FailJobSetFailurePolicyAction", 0, 0, nil, nil),
		failed: []*corev1.Pod{failedPod(1, 0, 0, 1)},
		left:   []*batchv1.Job{child("leader", 0, 0, 0, done), child("workers", 1, 0, 0, batchv1.JobFailed)},
	}, {
		name:   "FailJobSet: restarted instead",
		g:      chaosGroup{Name: "g", Shape: gFailGroup, Workers: 2, Pods: 1, FailIndex: 1, FailRestarts: 1, MaxRestarts: 2},
		js:     jobSet("Completed", "AllJobsCompleted", 1, 1, nil, nil),
		failed: []*corev1.Pod{failedPod(1, 0, 0, 1)},
		left:   []*batchv1.Job{child("leader", 0, 1, 0, done), child("workers", 0, 1, 0, done), child("workers", 1, 1, 0, done)},
		want: []string{"finished Completed (AllJobsCompleted), 1 finished conditions; want one, Failed FailJobSetFailurePolicyAction",
			`terminalState "Completed", want "Failed"`, "restarts 1, restartsCountTowardsMax 1, pods failed by kwok in attempts [0]; want 0, 0 and [0]"},
	}, {
		name: "past maxRestarts: failed",
		g:    over, js: jobSet("Failed", "ReachedMaxRestarts", 2, 2, nil, nil),
		failed: []*corev1.Pod{failedPod(1, 0, 0, 1), failedPod(1, 1, 0, 1), failedPod(1, 2, 0, 1)},
		left:   []*batchv1.Job{child("leader", 0, 2, 0, done), child("workers", 0, 2, 0, done), child("workers", 1, 2, 0, batchv1.JobFailed)},
	}, {
		name: "completed where it should have failed, a failure missing",
		g:    over, js: jobSet("Completed", "AllJobsCompleted", 2, 2, nil, nil),
		failed: []*corev1.Pod{failedPod(1, 0, 0, 1), failedPod(1, 1, 0, 1)},
		want:   []string{"finished Completed (AllJobsCompleted)", `terminalState "Completed"`, "the history shows pods failed by kwok in 2 attempts [0 1], the plan 3", "the plan says 2 restarts, the history 1", "0 children of worker index 0", "0 children of worker index 1"},
	}, {
		name: "RestartJob restarted the failed worker alone",
		g:    restartJob, js: jobSet("Completed", "AllJobsCompleted", 0, 0, []any{int64(1), int64(0)}, []any{int64(1), int64(0)}),
		failed: []*corev1.Pod{failedPod(0, 0, 0, 1)},
		left:   []*batchv1.Job{child("leader", 0, 0, 0, done), child("workers", 0, 0, 1, done), child("workers", 1, 0, 0, done)},
	}, {
		name: "RestartJob: counter behind, the old child left, one unfinished",
		g:    restartJob, js: jobSet("Completed", "AllJobsCompleted", 0, 0, []any{int64(0), int64(0)}, []any{int64(0), int64(0)}),
		failed: []*corev1.Pod{failedPod(0, 0, 0, 1)},
		left:   []*batchv1.Job{child("leader", 0, 0, 0, done), child("workers", 0, 0, 1, ""), child("workers", 1, 0, 0, done)},
		want: []string{"jobRestarts[0] of the workers 0 (all [0 0]); the plan fails it 1 times, the history shows pods failed by kwok in 1", "jobRestartsCountTowardsMax [0 0]; want 0, 0 and 1",
			"child workers-0-a0-j1 of job restart attempt 1 left, jobRestarts says 0", "workers-0-a0-j1 left unfinished", "workers-0-a0-j1 of the completed group is not Complete"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &groupChaos{gh: newGroupHistory()}
			for i, j := range tt.history {
				j.ResourceVersion = itoa(i + 1)
				g.gh.observeJob(watch.Added, j)
			}
			for _, p := range tt.failed {
				g.gh.observePod(p)
			}
			got := g.checkGroup(tt.g, tt.js, tt.left)
			if len(got) != len(tt.want) {
				t.Fatalf("checkGroup = %q, want %d problems %q", got, len(tt.want), tt.want)
			}
			for i := range got {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("problem %d = %q, want one containing %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestCheckDependsOn(t *testing.T) {
	g := chaosGroup{Name: "g", DependsOn: "Complete"}
	leader := childRecord{Role: "leader", Name: "l", SatisfiedRV: 5, CompleteRV: 9}
	early := childRecord{Role: "workers", Name: "w0", CreatedRV: 7}
	late := childRecord{Role: "workers", Name: "w1", CreatedRV: 10}
	if got := checkDependsOn(g, []childRecord{leader, late}); len(got) != 0 {
		t.Errorf("a worker after the leader completed: %q", got)
	}
	if got := checkDependsOn(g, []childRecord{leader, early, late}); len(got) != 1 || !strings.Contains(got[0], "w0 created at revision 7, the leader Complete at revision 9") {
		t.Errorf("a worker before the leader completed: %q", got)
	}
	g.DependsOn = "Ready"
	if got := checkDependsOn(g, []childRecord{leader, early, late}); len(got) != 0 {
		t.Errorf("workers after the leader was ready: %q", got)
	}
}

func TestGroupCountersGoingDown(t *testing.T) {
	h := newGroupHistory()
	for i, s := range []struct {
		restarts int64
		jobs     []any
	}{{1, []any{int64(0), int64(2)}}, {2, []any{int64(0), int64(2)}}, {1, []any{int64(0), int64(1)}}} {
		u := jobSet("", "", s.restarts, s.restarts, s.jobs, nil)
		u.SetResourceVersion(itoa(i))
		h.observeGroup(u)
	}
	if len(h.backwards) != 2 || !strings.Contains(h.backwards[0], "restarts 2→1") || !strings.Contains(h.backwards[1], "jobRestarts of \"workers\" went [0 2]→[0 1]") {
		t.Errorf("backwards = %q", h.backwards)
	}
}

func TestCheckOrder(t *testing.T) {
	blocking := chaosGroup{Name: "g", Shape: gBlocking}
	a0 := childRecord{Name: "a0", Attempt: 0, CreatedRV: 2, GoneRV: 10}
	b0 := childRecord{Name: "b0", Attempt: 0, CreatedRV: 3, GoneRV: 12}
	a1 := childRecord{Name: "a1", Attempt: 1, CreatedRV: 13}
	early := childRecord{Name: "early", Attempt: 1, CreatedRV: 11}
	unseen := childRecord{Name: "unseen", Attempt: 0, CreatedRV: 4, GoneUnseen: true}
	kept := childRecord{Name: "kept", Attempt: 0, CreatedRV: 5}
	tests := []struct {
		name     string
		g        chaosGroup
		hist     []childRecord
		finished uint64
		want     []string
	}{
		{"the next attempt after the old one is gone", blocking, []childRecord{a0, b0, a1}, 20, nil},
		{"a child created after the finish", blocking, []childRecord{a0, b0, a1}, 12, []string{"child a1 created at revision 13, after the group finished at 12"}},
		{"created before the old attempt was gone", blocking, []childRecord{a0, b0, early}, 0,
			[]string{"child early of attempt 1 created at revision 11, child b0 of attempt 0 gone at 12"}},
		{"an old child deleted while the watch was away is left out", blocking, []childRecord{a0, unseen, a1}, 0, nil},
		{"an old child never seen gone", blocking, []childRecord{a0, kept, a1}, 0, []string{"child kept of attempt 0 gone at 0"}},
		{"Recreate creates before the old attempt is gone", chaosGroup{Name: "g", Shape: gRecreate}, []childRecord{a0, b0, early}, 0, nil},
	}
	for _, tt := range tests {
		got := checkOrder(tt.g, tt.hist, tt.finished)
		if len(got) != len(tt.want) {
			t.Errorf("%s: checkOrder = %q, want %q", tt.name, got, tt.want)
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], tt.want[i]) {
				t.Errorf("%s: problem %q, want one containing %q", tt.name, got[i], tt.want[i])
			}
		}
	}
}

func TestResyncJobs(t *testing.T) {
	h := newGroupHistory()
	a, b := child("workers", 0, 0, 0, ""), child("workers", 1, 0, 0, "")
	a.ResourceVersion, b.ResourceVersion = "5", "6"
	h.observeJob(watch.Added, a)
	h.observeJob(watch.Added, b)
	h.resyncJobs([]batchv1.Job{*a})
	got := map[string]bool{}
	for _, r := range h.childrenOf("g") {
		got[r.Name] = r.GoneUnseen
	}
	if want := map[string]bool{a.Name: false, b.Name: true}; !cmp.Equal(got, want) {
		t.Errorf("gone unseen = %v, want %v", got, want)
	}
}
