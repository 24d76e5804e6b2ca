package main

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// checkGroup checks one group's end: u is its JobSet, left its child Jobs listed
// at the end.
func (g *groupChaos) checkGroup(cg chaosGroup, u *unstructured.Unstructured, left []*batchv1.Job) []string {
	var problems []string
	add := func(format string, args ...any) {
		problems = append(problems, cg.Name+": "+fmt.Sprintf(format, args...))
	}
	typ, reason, n := groupFinished(u)
	wantTyp, wantReason := "Completed", cg.wantReason()
	if cg.wantFailed() {
		wantTyp = "Failed"
	}
	if n != 1 || typ != wantTyp || (wantReason != "" && reason != wantReason) {
		add("finished %s (%s), %d finished conditions; want one, %s %s", typ, reason, n, wantTyp, wantReason)
	}
	if ts, _, _ := unstructured.NestedString(u.Object, "status", "terminalState"); ts != wantTyp {
		add("terminalState %q, want %q", ts, wantTyp)
	}
	restarts, _, _ := unstructured.NestedInt64(u.Object, "status", "restarts")
	towards, _, _ := unstructured.NestedInt64(u.Object, "status", "restartsCountTowardsMax")
	jobRestarts := jobRestartsOf(u)
	hist := g.gh.childrenOf(cg.Name)

	// Nothing created twice: one child Job per role, index and attempts.
	made := map[string]int{}
	for _, r := range hist {
		key := fmt.Sprintf("%s %d, attempt %d, job attempt %d", r.Role, r.Index, r.Attempt, r.JobAttempt)
		if made[key]++; made[key] == 2 {
			add("two child Jobs of %s", key)
		}
	}

	// The failures the history shows: the group attempts, and the attempts of each
	// worker child, in which kwok failed a pod.
	failedAttempts := map[int]bool{}
	failedJobAttempts := map[int]map[int]bool{}
	for _, f := range g.gh.failuresOf(cg.Name) {
		failedAttempts[f.Attempt] = true
		if f.Role != "workers" {
			continue
		}
		if failedJobAttempts[f.Index] == nil {
			failedJobAttempts[f.Index] = map[int]bool{}
		}
		failedJobAttempts[f.Index][f.JobAttempt] = true
	}
	switch {
	case cg.restartsGroup():
		caused := min(cg.FailRestarts, cg.MaxRestarts+1) // the attempts kwok failed
		seen := int64(len(failedAttempts))
		if seen != int64(caused) {
			add("the history shows pods failed by kwok in %d attempts %v, the plan %d (fail-restarts %d, maxRestarts %d)",
				seen, keys(failedAttempts), caused, cg.FailRestarts, cg.MaxRestarts)
		}
		if cg.wantFailed() {
			seen-- // the last failure failed the group instead of restarting it
		}
		if restarts != int64(cg.wantRestarts()) || restarts != seen || towards != restarts {
			add("restarts %d, restartsCountTowardsMax %d; the plan says %d restarts, the history %d", restarts, towards, cg.wantRestarts(), seen)
		}
	case cg.Shape == gRestartJob:
		got := jobRestarts["workers"]
		for i := range cg.Workers {
			var want, have int64
			if i == cg.FailIndex {
				want = int64(cg.FailRestarts)
			}
			if int(i) < len(got) {
				have = got[i]
			}
			seen := int64(len(failedJobAttempts[int(i)]))
			if have != want || have != seen {
				add("jobRestarts[%d] of the workers %d (all %v); the plan fails it %d times, the history shows pods failed by kwok in %d of its attempts", i, have, got, want, seen)
			}
		}
		counted := perRole(u, "jobRestartsCountTowardsMax")["workers"]
		if restarts != 0 || towards != 0 || int(cg.FailIndex) >= len(counted) || counted[cg.FailIndex] != int64(cg.FailRestarts) {
			add("restarts %d, restartsCountTowardsMax %d, the workers' jobRestartsCountTowardsMax %v; want 0, 0 and %d at index %d",
				restarts, towards, counted, cg.FailRestarts, cg.FailIndex)
		}
	case cg.Shape == gFailGroup:
		if restarts != 0 || towards != 0 || len(failedAttempts) != 1 || !failedAttempts[0] {
			add("restarts %d, restartsCountTowardsMax %d, pods failed by kwok in attempts %v; want 0, 0 and [0]", restarts, towards, keys(failedAttempts))
		}
	default:
		if restarts != 0 || towards != 0 || len(failedAttempts) > 0 {
			add("restarts %d, restartsCountTowardsMax %d, pods failed by kwok in attempts %v; want none", restarts, towards, keys(failedAttempts))
		}
	}

	// The children left: the current attempts only, within the replicas, finished.
	workers := map[int]int{}
	for _, j := range left {
		idx, att, jatt := labelInt(j.Labels, labelJobIndex), labelInt(j.Labels, labelRestartAttempt), max(labelInt(j.Labels, labelJobRestart), 0)
		role := j.Labels[labelRoleName]
		if int64(att) != restarts {
			add("child %s of attempt %d left, the group is at attempt %d", j.Name, att, restarts)
		}
		if role == "workers" {
			workers[idx]++
			var want int64
			if jr := jobRestarts["workers"]; idx >= 0 && idx < len(jr) {
				want = jr[idx]
			}
			if int64(jatt) != want {
				add("child %s of job restart attempt %d left, jobRestarts says %d", j.Name, jatt, want)
			}
			if idx >= int(cg.wantWorkers()) {
				add("child %s left beyond the workers' %d replicas", j.Name, cg.wantWorkers())
			}
		}
		if !isFinished(j) {
			add("child %s left unfinished", j.Name)
		}
		if typ == "Completed" && cg.Shape != gSuccessAny && !isComplete(j) {
			add("child %s of the completed group is not Complete", j.Name)
		}
	}
	if typ == "Completed" && cg.Shape != gSuccessAny {
		for i := range int(cg.wantWorkers()) {
			if workers[i] != 1 {
				add("%d children of worker index %d left, want 1", workers[i], i)
			}
		}
	}
	g.gh.mu.Lock()
	finishedRV := g.gh.finished[cg.Name]
	g.gh.mu.Unlock()
	problems = append(problems, checkOrder(cg, hist, finishedRV)...)
	switch cg.Shape {
	case gDependsOn:
		problems = append(problems, checkDependsOn(cg, hist)...)
	case gInPlace:
		prev, _, _ := unstructured.NestedInt64(u.Object, "status", "previousInPlaceRestartAttempt")
		cur, _, _ := unstructured.NestedInt64(u.Object, "status", "currentInPlaceRestartAttempt")
		pods := g.gh.podsSeen(cg.Name)
		if prev != 0 || cur != 1 || len(hist) != int(1+cg.Workers) || pods != int(1+cg.Workers*cg.Pods) {
			add("in place: previous %d, current %d, %d child Jobs and %d pods seen; want 0, 1, %d and %d (none replaced)",
				prev, cur, len(hist), pods, 1+cg.Workers, 1+cg.Workers*cg.Pods)
		}
	}
	return problems
}

// checkOrder: no child created once the group had finished (finishedRV, by etcd
// revision; 0: not seen); under BlockingRecreate, every child of an attempt gone
// before the first child of the next attempt was created (a child deleted while
// the watch was away is left out: its revision is unknown).
func checkOrder(cg chaosGroup, hist []childRecord, finishedRV uint64) []string {
	var problems []string
	for _, r := range hist {
		if finishedRV > 0 && r.CreatedRV > finishedRV {
			problems = append(problems, fmt.Sprintf("%s: child %s created at revision %d, after the group finished at %d", cg.Name, r.Name, r.CreatedRV, finishedRV))
		}
	}
	if cg.Shape != gBlocking {
		return problems
	}
	for _, r := range hist {
		if r.CreatedRV == 0 || r.Attempt == 0 {
			continue
		}
		for _, old := range hist {
			if old.Attempt == r.Attempt-1 && !old.GoneUnseen && (old.GoneRV == 0 || old.GoneRV > r.CreatedRV) {
				problems = append(problems, fmt.Sprintf("%s: child %s of attempt %d created at revision %d, child %s of attempt %d gone at %d (0: not seen gone; BlockingRecreate)",
					cg.Name, r.Name, r.Attempt, r.CreatedRV, old.Name, old.Attempt, old.GoneRV))
			}
		}
	}
	return problems
}

// checkDependsOn: no worker child created before the leader child of its attempt
// was ready (Ready) or complete (Complete), by etcd revision.
func checkDependsOn(cg chaosGroup, hist []childRecord) []string {
	var problems []string
	leaders := map[int]childRecord{}
	for _, r := range hist {
		if r.Role == "leader" {
			leaders[r.Attempt] = r
		}
	}
	for _, r := range hist {
		if r.Role != "workers" || r.CreatedRV == 0 {
			continue
		}
		l, ok := leaders[r.Attempt]
		at := l.SatisfiedRV
		if cg.DependsOn == "Complete" {
			at = l.CompleteRV
		}
		if !ok || at == 0 || r.CreatedRV < at {
			problems = append(problems, fmt.Sprintf("%s: worker %s created at revision %d, the leader %s at revision %d (dependsOn %s)",
				cg.Name, r.Name, r.CreatedRV, cg.DependsOn, at, cg.DependsOn))
		}
	}
	return problems
}

func isComplete(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == "True" {
			return true
		}
	}
	return false
}

func keys(m map[int]bool) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (h *groupHistory) podsSeen(group string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.pods[group])
}
