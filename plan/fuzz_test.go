package plan

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/jobstatus"
	plainindexes "github.com/jobkit/jobkit/plain/indexes"
)

// FuzzCompute plans arbitrary Jobs and pod sets built from the fuzz input and
// checks what holds for every plan: Compute never panics and never modifies its
// input; a plan never both creates and deletes, respects the creation cap and never
// creates a pod for an index that has succeeded; Settle with every removal gives
// Status; and, when the Job's status is one the API server would hold, every status
// write of the plan (RecordStatus, then Settle with any subset of the removals)
// passes jobstatus.ValidateUpdate.
func FuzzCompute(f *testing.F) {
	f.Add([]byte{}, uint16(0))
	f.Add([]byte{0, 3, 2, 6, 0, 0, 0, 0, 1, 2, 1, 0, 1, 1, 2, 0, 1}, uint16(1))                           // NonIndexed, a few pods
	f.Add([]byte{1, 5, 5, 255, 2, 1, 0, 0, 0, 4, 3, 1, 0, 2, 1, 2, 1, 1, 2, 3, 3, 0}, uint16(7))          // Indexed, per-index backoff
	f.Add([]byte{1, 4, 4, 0, 0, 2, 1, 3, 1, 6, 2, 1, 1, 1, 0, 3, 1, 0, 2, 0, 3, 2, 1, 1, 1}, uint16(300)) // policies
	f.Add([]byte{0, 2, 1, 1, 0, 0, 2, 0, 1, 2, 3, 0, 0, 1, 3, 1, 1, 1, 0}, uint16(65535))                 // failing Job
	f.Fuzz(func(t *testing.T, data []byte, now uint16) {
		b := &fuzzBytes{data: data}
		job := fuzzJob(b)
		pods := fuzzPods(b, job)
		in := Input{
			Workload:              JobWorkload(job),
			Pods:                  pods,
			ControllerName:        batchv1.JobControllerName,
			ExpectationsSatisfied: b.next()%4 != 0,
			Now:                   tbNow.Add(time.Duration(now) * time.Second),
			Options:               Options{MaxCreatesPerSync: int(b.next() % 4), MaxDeletesPerSync: int(b.next() % 4), MaxUncounted: int(b.next() % 4)},
		}
		for _, p := range pods {
			if p != nil && b.next()%5 == 0 {
				if in.PendingFinalizerRemovals == nil {
					in.PendingFinalizerRemovals = sets.New[types.UID]()
				}
				in.PendingFinalizerRemovals.Insert(p.UID)
			}
		}
		jobBefore := job.DeepCopy()
		podsBefore := make([]*corev1.Pod, len(pods))
		for i, p := range pods {
			podsBefore[i] = p.DeepCopy()
		}

		p, err := Compute(in)

		if !equality.Semantic.DeepEqual(jobBefore, job) {
			t.Fatalf("Compute modified the Job (-before +after):\n%s", cmp.Diff(jobBefore, job))
		}
		for i := range pods {
			if !equality.Semantic.DeepEqual(podsBefore[i], pods[i]) {
				t.Fatalf("Compute modified pod %d (-before +after):\n%s", i, cmp.Diff(podsBefore[i], pods[i]))
			}
		}
		if err != nil {
			return // an invalid Job (a negative count, Indexed without completions...)
		}
		_ = p.String()
		if p.Skip != "" {
			return
		}
		if len(p.Create) > 0 && len(p.Delete) > 0 {
			t.Fatalf("plan both creates %d and deletes %d pods:\n%s", len(p.Create), len(p.Delete), p)
		}
		if max := orDefault(in.Options.MaxCreatesPerSync, DefaultMaxCreatesPerSync); len(p.Create) > max {
			t.Fatalf("plan creates %d pods, more than the cap %d", len(p.Create), max)
		}
		if ptr.Deref(job.Spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion {
			done, _ := plainindexes.Parse(p.Status.CompletedIndexes, int(ptr.Deref(job.Spec.Completions, 0)))
			for _, c := range p.Create {
				if c.Index < 0 || c.Index >= int(*job.Spec.Completions) || done.Has(c.Index) {
					t.Fatalf("plan creates a pod for index %d (completions %d, completedIndexes %q)", c.Index, *job.Spec.Completions, p.Status.CompletedIndexes)
				}
			}
		}
		all := sets.New[types.UID]()
		var subset sets.Set[types.UID]
		for _, a := range p.RemoveFinalizers {
			all.Insert(a.Pod.UID)
			if b.next()%2 == 0 {
				if subset == nil {
					subset = sets.New[types.UID]()
				}
				subset.Insert(a.Pod.UID)
			}
		}
		if diff := cmp.Diff(p.Status, p.Settle(all).Status); diff != "" {
			t.Fatalf("Settle(every removal) differs from Status (-Status +Settle):\n%s", diff)
		}

		if errs := jobstatus.Validate(job); len(errs) > 0 {
			return // the API server would not hold this status: nothing to compare with
		}
		prev := job
		if p.RecordStatus != nil {
			next := tbWithStatus(job, *p.RecordStatus)
			if errs := jobstatus.ValidateUpdate(prev, next); len(errs) > 0 {
				t.Fatalf("API server rejects RecordStatus: %v\nplan:\n%s", errs.ToAggregate(), p)
			}
			prev = next
		}
		for _, removed := range []sets.Set[types.UID]{all, subset} {
			s := p.Settle(removed)
			if !s.Changed {
				continue
			}
			if errs := jobstatus.ValidateUpdate(prev, tbWithStatus(job, s.Status)); len(errs) > 0 {
				t.Fatalf("API server rejects the settled status with %d of %d removals: %v\nplan:\n%s", removed.Len(), all.Len(), errs.ToAggregate(), p)
			}
		}
	})
}

// fuzzBytes hands out the fuzz input one byte at a time, then zeros.
type fuzzBytes struct {
	data []byte
	i    int
}

func (b *fuzzBytes) next() byte {
	if b.i >= len(b.data) {
		return 0
	}
	b.i++
	return b.data[b.i-1]
}

func (b *fuzzBytes) chance(in byte) bool { return b.next()%in == 0 }

// fuzzJob builds a Job: mostly valid and defaulted, sometimes not.
func fuzzJob(b *fuzzBytes) *batchv1.Job {
	j := tbJob()
	s := &j.Spec
	mode := b.next()
	switch mode % 8 {
	case 0, 1, 2:
	case 3:
		s.CompletionMode = nil // not defaulted
	case 7:
		s.CompletionMode = ptr.To(batchv1.CompletionMode("Sometimes"))
	default:
		s.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	}
	indexed := ptr.Deref(s.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion
	completions := int32(b.next() % 7)
	s.Completions = ptr.To(completions)
	s.Parallelism = ptr.To(int32(b.next() % 7))
	if !indexed && b.chance(6) {
		s.Completions = nil
	}
	switch lim := b.next(); {
	case lim == 255:
		s.BackoffLimit = nil
	case lim == 254:
		s.BackoffLimit = ptr.To[int32](-1)
	default:
		s.BackoffLimit = ptr.To(int32(lim % 8))
	}
	if indexed && b.chance(3) {
		s.BackoffLimitPerIndex = ptr.To(int32(b.next() % 3))
		if b.chance(2) {
			s.MaxFailedIndexes = ptr.To(int32(b.next()) % (completions + 1))
		}
	}
	if b.chance(4) {
		s.PodFailurePolicy = &batchv1.PodFailurePolicy{}
		for range 1 + b.next()%3 {
			actions := []batchv1.PodFailurePolicyAction{batchv1.PodFailurePolicyActionIgnore, batchv1.PodFailurePolicyActionCount, batchv1.PodFailurePolicyActionFailJob, batchv1.PodFailurePolicyActionFailIndex}
			rule := batchv1.PodFailurePolicyRule{Action: actions[b.next()%4]}
			if b.chance(3) {
				rule.OnPodConditions = []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}
			} else {
				op := batchv1.PodFailurePolicyOnExitCodesOpIn
				if b.chance(3) {
					op = batchv1.PodFailurePolicyOnExitCodesOpNotIn
				}
				rule.OnExitCodes = &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: op, Values: []int32{int32(1 + b.next()%3)}}
			}
			s.PodFailurePolicy.Rules = append(s.PodFailurePolicy.Rules, rule)
		}
		s.PodReplacementPolicy = ptr.To(batchv1.Failed)
	} else if b.chance(3) {
		s.PodReplacementPolicy = ptr.To(batchv1.Failed)
	}
	if indexed && completions > 0 && b.chance(4) {
		rule := batchv1.SuccessPolicyRule{SucceededCount: ptr.To(int32(1 + int32(b.next())%completions))}
		if b.chance(2) {
			rule.SucceededIndexes = ptr.To("0-" + strconv.Itoa(int(completions-1)))
		}
		s.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{rule}}
	}
	if b.chance(5) {
		s.Suspend = ptr.To(true)
	}
	if b.chance(6) {
		s.ActiveDeadlineSeconds = ptr.To(int64(b.next()) * 30)
	}
	if b.chance(8) {
		s.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	}

	// The status: counters, indexes, conditions, mostly consistent.
	st := &j.Status
	st.Succeeded = int32(b.next() % 4)
	st.Failed = int32(b.next() % 4)
	if indexed {
		var done []int
		for ix := range int(completions) {
			if b.chance(3) {
				done = append(done, ix)
			}
		}
		st.CompletedIndexes = plainindexes.FromIndexes(done).String()
		st.Succeeded = int32(len(done))
		if s.BackoffLimitPerIndex != nil {
			st.FailedIndexes = ptr.To("")
		}
		if b.chance(9) {
			st.CompletedIndexes = "3-1,x"
		}
	}
	switch b.next() % 10 {
	case 0:
		st.Conditions = []batchv1.JobCondition{jobstatus.NewCondition(batchv1.JobFailureTarget, corev1.ConditionTrue, batchv1.JobReasonBackoffLimitExceeded, "Job has reached the specified backoff limit")}
	case 1:
		st.Conditions = []batchv1.JobCondition{jobstatus.NewCondition(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue, batchv1.JobReasonCompletionsReached, "Reached expected number of succeeded pods")}
	case 2:
		st.Conditions = []batchv1.JobCondition{jobstatus.NewCondition(batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", "Job suspended")}
	case 3:
		st.StartTime = nil
	}
	return j
}

// fuzzPods builds up to a dozen pods in every state: owned or orphan or another
// controller's, any phase, being deleted, with or without the finalizer, with a
// good, missing, out of range or unreadable index, ready or not.
func fuzzPods(b *fuzzBytes, job *batchv1.Job) []*corev1.Pod {
	n := int(b.next() % 13)
	pods := make([]*corev1.Pod, 0, n)
	for i := range n {
		kind := b.next()
		if kind == 255 {
			pods = append(pods, nil)
			continue
		}
		name := "p" + strconv.Itoa(i)
		var mods []func(*corev1.Pod)
		switch kind % 8 {
		case 0:
			mods = append(mods, tbPending)
		case 1, 2:
		case 3:
			mods = append(mods, tbTerminated(corev1.PodSucceeded, 0, tbAgo(time.Duration(b.next())*time.Second)))
		case 4, 5:
			mods = append(mods, tbTerminated(corev1.PodFailed, int32(1+b.next()%3), tbAgo(time.Duration(b.next())*time.Second)))
		case 6:
			mods = append(mods, tbFailed, tbPodCondition(corev1.DisruptionTarget))
		case 7:
			mods = append(mods, tbReady)
		}
		flags := b.next()
		if flags&1 != 0 {
			mods = append(mods, tbDeleted)
		}
		if flags&2 != 0 {
			mods = append(mods, tbNoFinalizer)
		}
		if flags&4 != 0 && flags&8 != 0 {
			mods = append(mods, tbOrphan)
		} else if flags&8 != 0 && flags&16 != 0 {
			mods = append(mods, tbOwnedBy("other-uid"))
		}
		switch ix := b.next(); {
		case ix < 200:
			mods = append(mods, tbIx(int(ix%8)))
		case ix < 230:
			mods = append(mods, tbIxString(fmt.Sprintf("x%d", ix)))
		}
		if c := b.next(); c%4 == 0 {
			mods = append(mods, tbFailureCount(int(c%3), int(c%5%2)))
		}
		if flags&32 != 0 {
			mods = append(mods, tbRestarts(int32(1+b.next()%3)))
		}
		p := tbPod(name, mods...)
		if flags&64 != 0 && i > 0 {
			p.UID = types.UID("p" + strconv.Itoa(i-1)) // a duplicate UID
		}
		pods = append(pods, p)
	}
	// Some of them may already be in the ledger.
	if u := job.Status.UncountedTerminatedPods; u != nil {
		for _, p := range pods {
			if p == nil {
				continue
			}
			switch b.next() % 6 {
			case 0:
				u.Succeeded = append(u.Succeeded, p.UID)
			case 1:
				u.Failed = append(u.Failed, p.UID)
			}
		}
		if b.chance(7) {
			u.Failed = append(u.Failed, "gone-uid")
		}
	}
	return pods
}
