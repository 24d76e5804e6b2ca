package plan

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	plainindexes "github.com/jobkit/jobkit/plain/indexes"
)

// runsOfTwo is the longest completedIndexes of indexes below c: runs of two
// indexes with gaps of one ("0,1,3,4,...").
func runsOfTwo(c int) plainindexes.Intervals {
	var ivs plainindexes.Intervals
	for i := 0; i < c; i += 3 {
		ivs = append(ivs, plainindexes.Interval{First: i, Last: min(i+1, c-1)})
	}
	return ivs
}

// everyOther returns the indexes below c of parity odd, as intervals of one.
func everyOther(c int, odd bool) plainindexes.Intervals {
	var ivs plainindexes.Intervals
	start := 0
	if odd {
		start = 1
	}
	for i := start; i < c; i += 2 {
		ivs = append(ivs, plainindexes.Interval{First: i, Last: i})
	}
	return ivs
}

// worstStatus is a status of an Indexed owner of c completions in the longest shape
// WorstStatusSize describes: the indexes, a full ledger, four conditions with long
// messages, every counter at its largest.
func worstStatus(c int, perIndex bool) batchv1.JobStatus {
	st := batchv1.JobStatus{
		Active: 1<<31 - 1, Succeeded: 1<<31 - 1, Failed: 1<<31 - 1,
		Ready: ptr.To[int32](1<<31 - 1), Terminating: ptr.To[int32](1<<31 - 1),
		StartTime: tbTime(tbNow), CompletionTime: tbTime(tbNow),
		UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{},
	}
	if perIndex {
		st.CompletedIndexes = everyOther(c, false).String()
		st.FailedIndexes = ptr.To(everyOther(c, true).String())
	} else {
		st.CompletedIndexes = runsOfTwo(c).String()
	}
	for i := range DefaultMaxUncounted {
		st.UncountedTerminatedPods.Failed = append(st.UncountedTerminatedPods.Failed, types.UID(fmt.Sprintf("%08d-0000-0000-0000-000000000000", i)))
	}
	kind := strings.Repeat("K", 63)
	for _, t := range []batchv1.JobConditionType{batchv1.JobSuspended, batchv1.JobFailureTarget, batchv1.JobFailed, batchv1.JobSuccessCriteriaMet} {
		st.Conditions = append(st.Conditions, batchv1.JobCondition{
			Type: t, Status: corev1.ConditionTrue, Reason: "MaxFailedIndexesExceeded",
			Message:       fmt.Sprintf(msgMaxFailedIndexesExceeded, kind),
			LastProbeTime: *tbTime(tbNow), LastTransitionTime: *tbTime(tbNow),
		})
	}
	return st
}

func TestWorstStatusSize(t *testing.T) {
	indexed := func(c int32, perIndex bool) Spec {
		s := Spec{Completions: ptr.To(c), Parallelism: ptr.To[int32](1), CompletionMode: ptr.To(batchv1.IndexedCompletion)}
		if perIndex {
			s.BackoffLimitPerIndex = ptr.To[int32](1)
		}
		return s
	}
	for _, tc := range []struct {
		name     string
		spec     Spec
		fits     bool // the bound is under MaxObjectBytes
		c        int  // > 0: check the bound against a status built in the worst shape
		perIndex bool
	}{
		{name: "NonIndexed", spec: Spec{Completions: ptr.To[int32](1_000_000)}, fits: true},
		{name: "Indexed 1,000", spec: indexed(1000, false), fits: true, c: 1000},
		{name: "Indexed 100,000 per index (the API's limit without maxFailedIndexes)", spec: indexed(100_000, true), fits: true, c: 100_000, perIndex: true},
		{name: "Indexed 100,000", spec: indexed(100_000, false), fits: true, c: 100_000},
		{name: "Indexed 250,000 per index", spec: indexed(250_000, true), fits: false, c: 250_000, perIndex: true},
		{name: "Indexed 350,000", spec: indexed(350_000, false), fits: false, c: 350_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.spec.WorstStatusSize(Options{})
			assert.Equal(t, tc.fits, got < MaxObjectBytes, "WorstStatusSize = %d, MaxObjectBytes %d", got, MaxObjectBytes)
			if tc.c == 0 {
				return
			}
			b, err := json.Marshal(worstStatus(tc.c, tc.perIndex))
			require.NoError(t, err)
			assert.LessOrEqual(t, len(b), got, "the bound holds the status in the worst shape")
			assert.Greater(t, float64(len(b)), 0.9*float64(got), "the bound is close to the worst shape (%d of %d bytes)", len(b), got)
		})
	}
}

func TestIntervalsBytes(t *testing.T) {
	for _, s := range []string{"", "0", "0,1", "0-2", "7,9-12,100000-200000,2147483646"} {
		ivs, err := plainindexes.Parse(s, 1<<31-1)
		require.NoError(t, err)
		assert.Equal(t, len(ivs.String()), intervalsBytes(ivs), "%q", s)
	}
}

// An Indexed Job whose completedIndexes would not fit in the object any more fails
// with StatusTooLarge instead of writing a status the API server refuses on every
// retry; a pod that still fits is counted as usual.
func TestComputeStatusTooLarge(t *testing.T) {
	const c = 1_000_000
	job := tbJob(tbIndexed, tbSize(c, 10))
	room := statusRoom(JobWorkload(job))
	// A stored completedIndexes 8 to 30 bytes short of the room: one more index of
	// six digits and a comma fits, five do not.
	var prev plainindexes.Intervals
	n := 0
	for i := 0; n < room-30; i += 3 {
		iv := plainindexes.Interval{First: i, Last: i + 1}
		prev = append(prev, iv)
		n += intervalsBytes(plainindexes.Intervals{iv}) + 1
	}
	// The room counts the rest of the object, the counters included: set the
	// status, and drop runs until one more index fits.
	var prevCount int32
	for {
		n = intervalsBytes(prev)
		prevCount = int32(prev.Count())
		job.Status.CompletedIndexes, job.Status.Succeeded = prev.String(), prevCount
		room = statusRoom(JobWorkload(job))
		if n <= room-8 {
			break
		}
		prev = prev[:len(prev)-1]
	}
	require.Greater(t, n+5*7, room, "five more indexes of six digits do not fit")
	top := prev[len(prev)-1].Last

	for _, tc := range []struct {
		name    string
		pods    int
		tooBig  bool
		counted int32
	}{
		{name: "one more index fits", pods: 1, counted: 1},
		{name: "five more do not", pods: 5, tooBig: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pods []*corev1.Pod
			for k := range tc.pods {
				pods = append(pods, tbPod(fmt.Sprintf("p-%d", k), tbIx(top+1_000+10*k), tbSucceeded))
			}
			p := tbCompute(t, tbInput(job, pods...))
			st := p.Status
			if p.RecordStatus != nil {
				st = *p.RecordStatus
			}
			if !tc.tooBig {
				assert.Equal(t, prevCount+tc.counted, st.Succeeded, "succeeded")
				assert.Empty(t, tbCondOf(&p.Status, batchv1.JobFailureTarget), "FailureTarget")
				return
			}
			assert.Equal(t, prev.String(), st.CompletedIndexes, "completedIndexes as stored")
			assert.Equal(t, prevCount, st.Succeeded, "succeeded never goes back, and counts what is stored")
			want := fmt.Sprintf("True/StatusTooLarge/"+msgStatusTooLarge, "Job", n+5*7, room, MaxObjectBytes)
			assert.Equal(t, want, tbCondOf(&p.Status, batchv1.JobFailureTarget), "FailureTarget")
			assert.Len(t, p.RemoveFinalizers, tc.pods, "the finished pods are let go")
			for _, c := range p.Create {
				t.Errorf("created %s for a failing Job", c.Pod.Name)
			}
		})
	}
}
