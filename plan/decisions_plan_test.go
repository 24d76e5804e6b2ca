package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/jobstatus"
)

// Tests of the plan as a whole: bad data, purity, Settle with partial removals and
// String.

type tbBadDataCase struct {
	name         string
	in           Input
	wantWarnings []string // each is part of one warning, in order
	check        func(t *testing.T, p *Plan)
}

func (c tbBadDataCase) input() tbInputCase { return tbInputCase{c.name, c.in} }

func tbBadDataCases() []tbBadDataCase {
	return []tbBadDataCase{
		{
			name: "an unparsable completedIndexes keeps its valid part",
			in: tbInput(tbJob(tbIndexed, tbSize(5, 5), tbStatus(func(s *batchv1.JobStatus) { s.CompletedIndexes, s.Succeeded = "0,x,3", 2 })),
				tbPod("p-2", tbIx(2))),
			wantWarnings: []string{`status.completedIndexes`},
			check: func(t *testing.T, p *Plan) {
				assert.Contains(t, p.Warnings[0], `"x"`, "the warning names the bad part")
				assert.Equal(t, "0,3", p.Status.CompletedIndexes, "the valid part is kept")
				assert.Equal(t, []int{1, 4}, tbCreateIndexes(p.Create), "no index is created twice")
			},
		},
		{
			name:         "a pod with a bad index annotation is removed as a stray",
			in:           tbInput(tbJob(tbIndexed, tbSize(2, 2)), tbPod("bad", tbIxString("x")), tbPod("p-0", tbIx(0))),
			wantWarnings: []string{`pod ns/bad: annotation batch.kubernetes.io/job-completion-index="x"`},
			check: func(t *testing.T, p *Plan) {
				assert.Equal(t, []string{"bad"}, tbDeleteNames(p.Delete))
			},
		},
		{
			name: "a bad failure-count annotation counts 0",
			in: tbInput(tbJob(tbSize(1, 1), tbPerIndex(1, -1)),
				tbPod("p-0", tbIx(0), tbFailed, func(p *corev1.Pod) { p.Annotations[batchv1.JobIndexFailureCountAnnotation] = "abc" })),
			wantWarnings: []string{`"abc"`},
			check: func(t *testing.T, p *Plan) {
				require.Len(t, p.Create, 1, "the index is retried")
				assert.Equal(t, "1", p.Create[0].Pod.Annotations[batchv1.JobIndexFailureCountAnnotation])
				assert.Equal(t, ptr.To(""), p.Status.FailedIndexes)
			},
		},
		{
			name: "an invalid selector adopts and releases nothing",
			in: tbInput(tbJob(func(j *batchv1.Job) {
				j.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}}
			}), tbPod("o", tbOrphan), tbPod("p")),
			wantWarnings: []string{"spec.selector"},
			check: func(t *testing.T, p *Plan) {
				assert.Empty(t, p.Adopt)
				assert.Empty(t, p.Release)
				assert.Equal(t, int32(1), p.Status.Active, "owned pods still count")
			},
		},
		{
			name: "a UID listed twice in the ledger is counted once",
			in: tbInput(tbJob(tbSize(3, 1), tbStatus(func(s *batchv1.JobStatus) {
				s.UncountedTerminatedPods.Failed = []types.UID{"gone", "gone"}
			})), tbPod("r")),
			wantWarnings: []string{"gone"},
			check: func(t *testing.T, p *Plan) {
				assert.Equal(t, int32(1), p.Status.Failed)
			},
		},
	}
}

func TestComputeBadData(t *testing.T) {
	for _, tc := range tbBadDataCases() {
		t.Run(tc.name, func(t *testing.T) {
			p := tbCompute(t, tc.in)
			require.Len(t, p.Warnings, len(tc.wantWarnings), "Compute(in).Warnings = %q", p.Warnings)
			for i, w := range tc.wantWarnings {
				assert.Contains(t, p.Warnings[i], w, "warning %d", i)
			}
			for _, w := range p.Warnings {
				assert.Contains(t, p.String(), "warning: "+w, "String shows the warnings")
			}
			if tc.check != nil {
				tc.check(t, p)
			}
		})
	}
}

// tbAllInputs returns the inputs of every table.
func tbAllInputs() []tbInputCase {
	var out []tbInputCase
	add := func(prefix string, cs []tbInputCase) {
		for _, c := range cs {
			out = append(out, tbInputCase{prefix + "/" + c.name, c.in})
		}
	}
	add("D1", tbInputsOf(tbD1Cases()))
	add("D2", tbInputsOf(tbD2Cases()))
	add("D3", tbInputsOf(tbD3Cases()))
	add("D4", tbInputsOf(tbD4Cases()))
	add("D5", tbInputsOf(tbD5Cases()))
	add("D6", tbInputsOf(tbD6Cases()))
	add("D7", tbInputsOf(tbD7Cases()))
	add("D8", tbInputsOf(tbD8Cases()))
	add("D9", tbInputsOf(tbD9Cases()))
	add("D10", tbInputsOf(tbD10Cases()))
	add("D11", tbInputsOf(tbD11Cases()))
	add("D12", tbInputsOf(tbD12Cases()))
	add("D13", tbInputsOf(tbD13Cases()))
	add("D14", tbInputsOf(tbD14Cases()))
	add("D15", tbInputsOf(tbD15Cases()))
	add("bad", tbInputsOf(tbBadDataCases()))
	add("settle", tbInputsOf(tbSettleCases()))
	return out
}

func tbInputsOf[C interface{ input() tbInputCase }](cs []C) []tbInputCase {
	out := make([]tbInputCase, len(cs))
	for i, c := range cs {
		out[i] = c.input()
	}
	return out
}

func TestComputeDoesNotMutateInput(t *testing.T) {
	all := tbAllInputs()
	require.Greater(t, len(all), 100, "every table is covered")
	for _, tc := range all {
		t.Run(tc.name, func(t *testing.T) {
			before := tbDeepCopyInput(tc.in)
			p1, err1 := Compute(tc.in)
			if diff := cmp.Diff(before, tc.in); diff != "" {
				t.Fatalf("Compute modified its input (-before +after):\n%s", diff)
			}
			if p1 != nil {
				s1 := p1.String()
				p1.Settle(sets.New[types.UID]("p", "a", "f", "s"))
				assert.Equal(t, s1, p1.String(), "Settle modified the plan")
				if diff := cmp.Diff(before, tc.in); diff != "" {
					t.Fatalf("Settle modified the input (-before +after):\n%s", diff)
				}
			}
			// The same input gives the same plan.
			p2, err2 := Compute(tc.in)
			assert.Equal(t, err1, err2, "errors of two runs")
			if diff := cmp.Diff(p1, p2); diff != "" {
				t.Errorf("two runs of Compute differ (-first +second):\n%s", diff)
			}
		})
	}
}

type tbSettleCase struct {
	name          string
	in            Input
	removed       []types.UID
	wantUncounted batchv1.UncountedTerminatedPods
	wantSucceeded int32
	wantFailed    int32
	wantFinished  batchv1.JobConditionType
	wantChanged   bool
}

func (c tbSettleCase) input() tbInputCase { return tbInputCase{c.name, c.in} }

func tbSettleCases() []tbSettleCase {
	twoSucceeded := func() Input {
		return tbInput(tbJob(tbSize(2, 2)), tbPod("a", tbSucceeded), tbPod("b", tbSucceeded))
	}
	twoFailed := func() Input {
		return tbInput(tbJob(tbSize(2, 2), tbBackoffLimit(0)), tbPod("f1", tbFailed), tbPod("f2", tbFailed))
	}
	return []tbSettleCase{
		{
			name:          "every removal succeeded: counted, and the Job completes",
			in:            twoSucceeded(),
			removed:       []types.UID{"a", "b"},
			wantSucceeded: 2,
			wantFinished:  batchv1.JobComplete,
			wantChanged:   true,
		},
		{
			name:          "one removal failed: its UID stays uncounted and the Job does not finish",
			in:            twoSucceeded(),
			removed:       []types.UID{"a"},
			wantUncounted: batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"b"}},
			wantSucceeded: 1,
			wantChanged:   true,
		},
		{
			name:          "no removal succeeded: nothing to write after RecordStatus",
			in:            twoSucceeded(),
			wantUncounted: batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"a", "b"}},
		},
		{
			name:          "UIDs unknown to the plan change nothing",
			in:            twoSucceeded(),
			removed:       []types.UID{"zzz"},
			wantUncounted: batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"a", "b"}},
		},
		{
			name:          "a failing Job: a failed removal keeps Failed away",
			in:            twoFailed(),
			removed:       []types.UID{"f2"},
			wantUncounted: batchv1.UncountedTerminatedPods{Failed: []types.UID{"f1"}},
			wantFailed:    1,
			wantChanged:   true,
		},
		{
			name:         "a failing Job: every removal succeeded, Failed",
			in:           twoFailed(),
			removed:      []types.UID{"f1", "f2"},
			wantFailed:   2,
			wantFinished: batchv1.JobFailed,
			wantChanged:  true,
		},
		{
			name: "removals pending from an earlier sync count as done",
			in: tbWithInput(tbInput(tbJob(tbSize(3, 3), tbStatus(func(s *batchv1.JobStatus) {
				s.UncountedTerminatedPods.Succeeded = []types.UID{"b"}
			})), tbPod("a", tbSucceeded), tbPod("b", tbSucceeded), tbPod("r")), func(in *Input) {
				in.PendingFinalizerRemovals = sets.New[types.UID]("b")
			}),
			wantUncounted: batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"a"}},
			wantSucceeded: 1,
		},
		{
			name: "without RecordStatus, Changed compares with the Job's status",
			in: tbInput(tbJob(tbSize(3, 1), tbStatus(func(s *batchv1.JobStatus) {
				s.Active = 1
				s.UncountedTerminatedPods.Failed = []types.UID{"f"}
			})), tbPod("f", tbFailed), tbPod("r")),
			wantUncounted: batchv1.UncountedTerminatedPods{Failed: []types.UID{"f"}},
		},
		{
			// Succeeded indexes need no ledger entry, so nothing holds the Job back; the
			// pod keeps its finalizer and loses it in the cleanup of the finished Job.
			// Upstream returns the patch error instead and finishes in a later sync.
			// As upstream: a sync in which a finalizer removal failed does not finish the
			// Job; RecordStatus already holds the completed indexes, so nothing changes.
			name:        "Indexed: a failed removal of a succeeded pod holds Complete",
			in:          tbInput(tbJob(tbIndexed, tbSize(2, 2)), tbPod("p-0", tbIx(0), tbSucceeded), tbPod("p-1", tbIx(1), tbSucceeded)),
			removed:     []types.UID{"p-0"},
			wantChanged: false,
		},
		{
			name:          "Indexed: every removal succeeded, Complete",
			in:            tbInput(tbJob(tbIndexed, tbSize(2, 2)), tbPod("p-0", tbIx(0), tbSucceeded), tbPod("p-1", tbIx(1), tbSucceeded)),
			removed:       []types.UID{"p-0", "p-1"},
			wantSucceeded: 2,
			wantFinished:  batchv1.JobComplete,
			wantChanged:   true,
		},
		{
			name: "a skipped plan settles to nothing",
			in:   tbInput(tbJob(tbManagedBy("example.com/other")), tbPod("a", tbSucceeded)),
		},
	}
}

func TestPlanSettle(t *testing.T) {
	for _, tc := range tbSettleCases() {
		t.Run(tc.name, func(t *testing.T) {
			p := tbCompute(t, tc.in)
			got := p.Settle(sets.New(tc.removed...))
			assert.Equal(t, tc.wantChanged, got.Changed, "Settle(%v).Changed\nplan:\n%s", tc.removed, p)
			if !got.Changed {
				return
			}
			if diff := cmp.Diff(tc.wantUncounted, ptr.Deref(got.Status.UncountedTerminatedPods, batchv1.UncountedTerminatedPods{}), tbEquateEmptyUIDs); diff != "" {
				t.Errorf("Settle(%v).Status.UncountedTerminatedPods (-want +got):\n%s", tc.removed, diff)
			}
			assert.Equal(t, tc.wantSucceeded, got.Status.Succeeded, "Settle(%v).Status.Succeeded", tc.removed)
			assert.Equal(t, tc.wantFailed, got.Status.Failed, "Settle(%v).Status.Failed", tc.removed)
			var finished batchv1.JobConditionType
			if got.Finished != nil {
				finished = got.Finished.Type
				assert.Equal(t, tbNow, got.Finished.LastTransitionTime.Time.UTC(), "time of the terminal condition")
			}
			assert.Equal(t, tc.wantFinished, finished, "Settle(%v).Finished", tc.removed)
			if ft, ok := jobstatus.Finished(&got.Status); ok != (tc.wantFinished != "") || ft != tc.wantFinished {
				t.Errorf("Settle(%v).Status finished = %q, want %q", tc.removed, ft, tc.wantFinished)
			}
			if tc.wantFinished == "" {
				assert.Empty(t, got.Events, "no terminal event before the Job finishes")
			} else {
				assert.NotEmpty(t, got.Events, "terminal event")
			}
			// The write of the settled status passes the API rules.
			prev := inputJob(tc.in)
			if p.RecordStatus != nil {
				prev = tbWithStatus(inputJob(tc.in), *p.RecordStatus)
			}
			if errs := jobstatus.ValidateUpdate(prev, tbWithStatus(inputJob(tc.in), got.Status)); len(errs) > 0 {
				t.Errorf("API server rejects Settle(%v).Status: %v", tc.removed, errs.ToAggregate())
			}
		})
	}
}

var tbEquateEmptyUIDs = cmp.FilterValues(func(a, b []types.UID) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())

func TestPlanString(t *testing.T) {
	cases := []struct {
		name string
		in   Input
		want string
	}{
		{
			name: "first sync",
			in:   tbInput(tbJob(tbSize(3, 2), tbNotStarted)),
			want: "status: active=2 ready=0 terminating=0 succeeded=0 failed=0 (changed)\n" +
				"create 2: too few active pods, too few active pods",
		},
		{
			name: "failing Job",
			in:   tbInput(tbJob(tbBackoffLimit(0), tbSize(2, 2)), tbPod("f", tbFailed), tbPod("r", tbReady)),
			want: "status: active=0 ready=0 terminating=1 succeeded=0 failed=2 (changed)\n" +
				"record first: uncounted succeeded=0 failed=2\n" +
				"remove finalizer 2: f (pod failed), r (job finishing: BackoffLimitExceeded)\n" +
				"delete 1: r (job finishing: BackoffLimitExceeded)\n" +
				"condition FailureTarget=True BackoffLimitExceeded: Job has reached the specified backoff limit",
		},
		{
			name: "Indexed with adoption, strays and warnings",
			in: tbInput(tbJob(tbIndexed, tbSize(9, 9), tbStatus(func(s *batchv1.JobStatus) { s.CompletedIndexes, s.Succeeded = "0", 1 })),
				tbPod("p-3", tbIx(3), tbSucceeded), tbPod("o", tbOrphan), tbPod("bad", tbIxString("x"))),
			want: "status: active=0 ready=0 terminating=2 succeeded=2 failed=0 completedIndexes=\"0,3\" (changed)\n" +
				"adopt 1: o (orphan matching the selector)\n" +
				"record first: uncounted succeeded=0 failed=0 completedIndexes=\"0,3\"\n" +
				"remove finalizer 1: p-3 (pod succeeded)\n" +
				"delete 2: bad (no valid completion index), o (no valid completion index)\n" +
				"warning: pod ns/o: annotation batch.kubernetes.io/job-completion-index=\"\": missing\n" +
				"warning: pod ns/bad: annotation batch.kubernetes.io/job-completion-index=\"x\": not a non-negative 32-bit integer",
		},
		{
			name: "skipped",
			in:   tbInput(tbJob(tbManagedBy("example.com/other"))),
			want: `skip: spec.managedBy is "example.com/other", not "kubernetes.io/job-controller"`,
		},
		{
			name: "backoff",
			in:   tbInput(tbJob(tbSize(3, 1), tbDeadline(100), tbStartedAt(tbAgo(40*time.Second))), tbPod("f", tbFailedAgo(3*time.Second))),
			want: "status: active=0 ready=0 terminating=0 succeeded=0 failed=1 (changed)\n" +
				"record first: uncounted succeeded=0 failed=1\n" +
				"remove finalizer 1: f (pod failed)\n" +
				"requeue after 7s: pod failure backoff after 1 consecutive failure(s)",
		},
		{
			name: "suspend, long lists cut after three",
			in:   tbInput(tbJob(tbSize(3, 3), tbSuspend), tbPods("p", 5)...),
			want: "status: active=0 ready=0 terminating=5 succeeded=0 failed=0 (changed)\n" +
				"delete 5: p-0 (job suspended), p-1 (job suspended), p-2 (job suspended), and 2 more\n" +
				"condition Suspended=True JobSuspended: Job suspended",
		},
		{
			name: "nothing to do",
			in:   tbInput(tbJob(tbStatus(func(s *batchv1.JobStatus) { s.Active = 1 })), tbPod("p")),
			want: "status: active=1 ready=0 terminating=0 succeeded=0 failed=0",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := tbCompute(t, tc.in)
			got := p.String()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Plan.String() (-want +got):\n%s", diff)
			}
			assert.LessOrEqual(t, strings.Count(got, "\n")+1, 10, "a few lines")
		})
	}
}
