package childjobs_test

import (
	"strconv"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/childjobs"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// benchInput is a group of a leader and n-1 workers (8 pods each) with a failure
// policy of three rules; with children, every child exists and runs, its pods
// ready.
func benchInput(b *testing.B, n int, children bool) *childjobs.Input {
	in := leaderWorkers(int32(n - 1))
	in.Templates[1] = template(8)
	in.Spec.FailurePolicy = &plaingroup.FailurePolicy{MaxRestarts: 10, Rules: []plaingroup.Rule{
		{Name: "pfp", Action: plaingroup.FailJobSet, OnJobFailureReasons: []string{"PodFailurePolicy"}},
		{Name: "msg", Action: plaingroup.RestartJob, OnJobFailureMessagePatterns: []string{`exit code 42\b`}},
		{Name: "leader", Action: plaingroup.FailJobSet, TargetReplicatedJobs: []string{"leader"}},
	}}
	if !children {
		return in
	}
	first, err := childjobs.Compute(in)
	if err != nil {
		b.Fatal(err)
	}
	in.Status, in.ServiceExists = first.Status, true
	for _, c := range first.Create {
		j := c.Job
		j.Status.Active, j.Status.Ready = *j.Spec.Parallelism, ptr.To(*j.Spec.Parallelism)
		in.Children = append(in.Children, j)
	}
	steady, err := childjobs.Compute(in)
	if err != nil {
		b.Fatal(err)
	}
	in.Status = steady.Status
	return in
}

var benchChildren = []int{10, 100, 1000}

// BenchmarkCompute measures one sync: the first (every child created), a
// steady one (every child running, nothing to do), and the restart after one
// worker failed (every child deleted).
func BenchmarkCompute(b *testing.B) {
	for _, n := range benchChildren {
		b.Run("first/"+strconv.Itoa(n), func(b *testing.B) {
			in := benchInput(b, n, false)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := childjobs.Compute(in); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("steady/"+strconv.Itoa(n), func(b *testing.B) {
			in := benchInput(b, n, true)
			b.ReportAllocs()
			for b.Loop() {
				if p, err := childjobs.Compute(in); err != nil || !p.IsEmpty() {
					b.Fatal(err, p.String())
				}
			}
		})
		b.Run("restart/"+strconv.Itoa(n), func(b *testing.B) {
			in := benchInput(b, n, true)
			last := in.Children[len(in.Children)-1]
			last.Status.Conditions = []batchv1.JobCondition{{
				Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded",
				Message: "Job has reached the specified backoff limit", LastTransitionTime: metav1.NewTime(t0.Add(time.Minute)),
			}}
			b.ReportAllocs()
			for b.Loop() {
				if p, err := childjobs.Compute(in); err != nil || len(p.Delete) != n {
					b.Fatal(err, p.String())
				}
			}
		})
	}
}

// BenchmarkReadChild measures reading one child Job.
func BenchmarkReadChild(b *testing.B) {
	j := childJob(goodLabels(), cond(batchv1.JobFailed, corev1.ConditionTrue, "BackoffLimitExceeded", t0))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := childjobs.ReadChild(j); err != nil {
			b.Fatal(err)
		}
	}
}
