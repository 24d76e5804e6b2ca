package jobstatus

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// transitionDetails are the messages of the rules that compare the old status with
// the new one; Validate, which sees one status, cannot report them.
var transitionDetails = []string{
	"cannot disable the terminal",
	"cannot decrease the failed counter",
	"cannot decrease the succeeded counter",
	"completionTime cannot be mutated",
	"startTime cannot be removed for unsuspended job",
	"cannot disable the SuccessCriteriaMet=True condition",
	"cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions",
}

// FuzzValidateUpdate validates status updates between arbitrary Jobs built from the
// fuzz input: it never panics nor modifies its inputs, every error is under
// "status", an update that changes nothing reports no more than Validate, and any
// error of an update is either a transition rule or one Validate reports as well
// (Validate is the stricter of the two).
func FuzzValidateUpdate(f *testing.F) {
	f.Add([]byte{}, []byte{})
	f.Add([]byte{1, 5, 5, 2, 3, 1, 0, 0, 0, 2}, []byte{1, 5, 5, 2, 4, 1, 0, 1, 1, 3})
	f.Add([]byte{0, 3, 1, 0, 0, 0, 0, 2, 0, 1, 5, 6}, []byte{0, 3, 1, 0, 0, 1, 2, 2, 3, 1, 5, 6, 7})
	f.Add([]byte{1, 4, 4, 1, 7, 2, 1, 4, 2, 0, 1, 1}, []byte{1, 2, 2, 1, 7, 2, 1, 4, 2, 0, 1, 1})
	f.Fuzz(func(t *testing.T, oldData, curData []byte) {
		old := fuzzJob(oldData, nil)
		cur := fuzzJob(curData, old)
		oldBefore, curBefore := old.DeepCopy(), cur.DeepCopy()

		update := ValidateUpdate(old, cur)
		again := ValidateUpdate(old, cur)
		strict := Validate(cur)
		self := ValidateUpdate(cur, cur)

		if !cmp.Equal(oldBefore, old) || !cmp.Equal(curBefore, cur) {
			t.Fatal("validation modified its input")
		}
		if !cmp.Equal(summaryOf(update), summaryOf(again)) {
			t.Fatalf("ValidateUpdate is not deterministic: %v, then %v", update, again)
		}
		strictSet := map[string]bool{}
		for _, e := range strict {
			strictSet[e.Field+": "+e.Detail] = true
		}
		for _, errs := range [][]*field.Error{update, strict, self} {
			for _, e := range errs {
				if e == nil || (e.Field != "status" && !strings.HasPrefix(e.Field, "status.")) {
					t.Fatalf("error outside status: %#v", e)
				}
			}
		}
		for _, e := range self {
			if !strictSet[e.Field+": "+e.Detail] {
				t.Fatalf("ValidateUpdate(cur, cur) reports %q, which Validate(cur) does not: %v", e, strict)
			}
		}
		for _, e := range update {
			if isTransition(e) {
				continue
			}
			if !strictSet[e.Field+": "+e.Detail] {
				t.Fatalf("ValidateUpdate(old, cur) reports %q, which Validate(cur) does not: %v", e, strict)
			}
		}
	})
}

func isTransition(e *field.Error) bool {
	for _, d := range transitionDetails {
		if strings.Contains(e.Detail, d) {
			return true
		}
	}
	return false
}

func summaryOf(errs field.ErrorList) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}

// fuzzJob builds a Job from data. With base, the spec is mostly base's (a status
// update keeps the spec) and the status is a change of base's.
func fuzzJob(data []byte, base *batchv1.Job) *batchv1.Job {
	i := 0
	next := func() byte {
		if i >= len(data) {
			return 0
		}
		i++
		return data[i-1]
	}
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns"}}
	if base != nil && next()%4 != 0 {
		j.Spec = *base.Spec.DeepCopy()
		j.Status = *base.Status.DeepCopy()
	} else {
		s := &j.Spec
		if next()%2 == 0 {
			s.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		}
		if c := next(); c != 255 {
			s.Completions = ptr.To(int32(c % 8))
		}
		s.Parallelism = ptr.To(int32(next() % 8))
		if next()%3 == 0 {
			s.BackoffLimitPerIndex = ptr.To(int32(next() % 3))
		}
		if next()%4 == 0 {
			s.Suspend = ptr.To(true)
		}
		if next()%5 == 0 {
			s.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To[int32](1)}}}
		}
	}
	st := &j.Status
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(b byte) *metav1.Time { return ptr.To(metav1.NewTime(t0.Add(time.Duration(b%4) * time.Minute))) }
	for range int(next() % 12) {
		switch op := next(); op % 12 {
		case 0:
			st.Active = int32(op/12) - 3
		case 1:
			st.Succeeded = int32(next() % 6)
		case 2:
			st.Failed = int32(next()%6) - 1
		case 3:
			st.Ready = ptr.To(int32(next()%4) - 1)
		case 4:
			st.Terminating = ptr.To(int32(next() % 3))
		case 5:
			st.StartTime = nil
			if next()%3 != 0 {
				st.StartTime = at(next())
			}
		case 6:
			st.CompletionTime = nil
			if next()%2 == 0 {
				st.CompletionTime = at(next())
			}
		case 7:
			st.CompletedIndexes = fuzzIndexes(next())
		case 8:
			st.FailedIndexes = nil
			if next()%3 != 0 {
				st.FailedIndexes = ptr.To(fuzzIndexes(next()))
			}
		case 9:
			u := &batchv1.UncountedTerminatedPods{}
			for range int(next() % 4) {
				uid := types.UID(strconv.Itoa(int(next() % 4)))
				if next()%5 == 0 {
					uid = ""
				}
				if next()%2 == 0 {
					u.Succeeded = append(u.Succeeded, uid)
				} else {
					u.Failed = append(u.Failed, uid)
				}
			}
			st.UncountedTerminatedPods = u
		default:
			kinds := []batchv1.JobConditionType{batchv1.JobComplete, batchv1.JobFailed, batchv1.JobFailureTarget, batchv1.JobSuccessCriteriaMet, batchv1.JobSuspended}
			ct := kinds[next()%5]
			status := corev1.ConditionTrue
			if next()%3 == 0 {
				status = corev1.ConditionFalse
			}
			st.Conditions, _ = SetCondition(st.Conditions, NewCondition(ct, status, "R", "m"), t0)
		}
	}
	return j
}

// fuzzIndexes returns an index string, valid or not.
func fuzzIndexes(b byte) string {
	return []string{"", "0", "1", "0-2", "0,2", "1-3", "2,3", "5", "7-9", "3-1", "x", "1,1", "0-1,3", "4,6"}[b%14]
}
