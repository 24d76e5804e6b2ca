package group_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/jobkit/jobkit/plain/group"
)

var benchSizes = []int{10, 1000, 100_000}

// benchGroup is a leader and n-1 workers after one restart: every tenth worker
// (from the first) is failed (BackoffLimitExceeded, at decreasing times, so the earliest is the
// last), every fifth has succeeded, the rest run; a tenth of the indexes still
// hold a child of the old attempt.
func benchGroup(n int) ([]group.Role, []group.Child, group.Counters) {
	roles := []group.Role{
		{Name: "leader", Replicas: 1, Parallelism: 1},
		{Name: "workers", Replicas: int32(n - 1), Parallelism: 8, Completions: ptr[int32](8)},
	}
	children := make([]group.Child, 0, n+n/10)
	children = append(children, group.Child{Name: "js-leader-0", Role: "leader", Attempt: 1, Ready: 1, Active: 1})
	for i := 1; i < n; i++ {
		ch := group.Child{Name: "js-workers-" + strconv.Itoa(i-1), Role: "workers", Index: int32(i - 1), Attempt: 1, Ready: 8, Active: 8}
		switch {
		case i%10 == 1:
			ch.Outcome, ch.Reason, ch.Message = group.Failed, "BackoffLimitExceeded", "Job has reached the specified backoff limit"
			ch.FinishedAt = t0.Add(time.Duration(n-i) * time.Second)
		case i%5 == 0:
			ch.Outcome = group.Succeeded
		case i%10 == 3:
			ch.Attempt = 0 // old attempt: obsolete
		}
		children = append(children, ch)
	}
	return roles, children, group.Counters{Restarts: 1, RestartsCountTowardsMax: 1}
}

// benchPolicy has three rules that match nothing (a reason, a pattern, a target)
// before the one that matches, the worst order.
func benchPolicy() *group.FailurePolicy {
	return &group.FailurePolicy{MaxRestarts: 10, Rules: []group.Rule{
		{Name: "pfp", Action: group.FailJobSet, OnJobFailureReasons: []string{"PodFailurePolicy"}},
		{Name: "msg", Action: group.FailJobSet, OnJobFailureMessagePatterns: []string{`exit code 42\b`}},
		{Name: "leader", Action: group.FailJobSet, TargetReplicatedJobs: []string{"leader"}},
		{Name: "restart", Action: group.RestartJobSet, OnJobFailureMessagePatterns: []string{"backoff limit"}},
	}}
}

func BenchmarkDecide(b *testing.B) {
	m, err := group.Compile(benchPolicy())
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range benchSizes {
		_, children, c := benchGroup(n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if d, _ := m.Decide(children, c); d.Effect != group.RestartGroup {
					b.Fatal(d.Effect)
				}
			}
		})
	}
}

func BenchmarkSucceed(b *testing.B) {
	for _, n := range benchSizes {
		roles, children, c := benchGroup(n)
		// Only running and succeeded children, so the whole list is read.
		var ok []group.Child
		for _, ch := range children {
			if ch.Outcome != group.Failed {
				ok = append(ok, ch)
			}
		}
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				group.Succeed(nil, roles, ok, c)
			}
		})
	}
}

func BenchmarkStatuses(b *testing.B) {
	for _, n := range benchSizes {
		roles, children, c := benchGroup(n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				group.Statuses(roles, children, c)
			}
		})
	}
}

func BenchmarkObsolete(b *testing.B) {
	for _, n := range benchSizes {
		_, children, c := benchGroup(n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				group.Obsolete(children, c)
			}
		})
	}
}

// BenchmarkCreations is the restart's recreation: the obsolete children are
// gone and a tenth of the indexes are free.
func BenchmarkCreations(b *testing.B) {
	for _, n := range benchSizes {
		roles, children, c := benchGroup(n)
		current := children[:0:0]
		for _, ch := range children {
			if c.Current(&ch) {
				current = append(current, ch)
			}
		}
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				group.Creations(roles, current, c, group.Recreate, nil)
			}
		})
	}
}

// BenchmarkIdentities names and labels every child of a new group.
func BenchmarkIdentities(b *testing.B) {
	for _, n := range benchSizes {
		roles, _, c := benchGroup(n)
		slots := group.Creations(roles, nil, c, group.Recreate, nil)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				group.Identities("js", roles, c, slots)
			}
		})
	}
}

// BenchmarkInPlaceNext is one sync of a group restarted in place whose pods
// are half on attempt 2 and half on attempt 1 (previous moves to 1), n pods in
// one role.
func BenchmarkInPlaceNext(b *testing.B) {
	for _, n := range benchSizes {
		roles := []group.Role{{Name: "workers", Replicas: int32(n), Parallelism: 1}}
		pods := make([]group.PodAttempt, n)
		for i := range pods {
			pods[i] = group.PodAttempt{Annotation: strconv.Itoa(1 + i%2), Annotated: true}
		}
		a := group.InPlaceAttempts{Previous: ptr[int32](0), Current: ptr[int32](0)}
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _, _ = a.Next(roles, pods, 5, group.Counters{})
			}
		})
	}
}

// BenchmarkSurplus is a role scaled down by half: half the workers are
// beyond its replicas, sorted highest index first.
func BenchmarkSurplus(b *testing.B) {
	for _, n := range benchSizes {
		roles, children, _ := benchGroup(n)
		roles[1].Replicas /= 2
		spec := group.Spec{Name: "js", Roles: roles}
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				spec.Surplus(children)
			}
		})
	}
}

// BenchmarkResized is a role grown from 8 to 16 pods per child: every running
// child of the current attempt is resized.
func BenchmarkResized(b *testing.B) {
	for _, n := range benchSizes {
		roles, children, c := benchGroup(n)
		roles[1].Parallelism, roles[1].Completions = 16, ptr[int32](16)
		for i := range children {
			children[i].Parallelism, children[i].Completions = 8, ptr[int32](8)
		}
		spec := group.Spec{Name: "js", Roles: roles}
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				spec.Resized(children, c)
			}
		})
	}
}
