package plan

import (
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Tracking is the part of an owner's status by which jobkit keeps count of its pods
// across syncs, crashes and restarts: the fields of a batchv1.JobStatus that have no
// place in a custom resource's own status shape (a phase, conditions, worker counts)
// and that must come back exactly as written (the package's "Status contract" says
// why, field by field). A custom resource embeds it in its status as it is, under a
// field of its own:
//
//	type BatchRunStatus struct {
//		Phase      string             `json:"phase,omitempty"`
//		Conditions []metav1.Condition `json:"conditions,omitempty"`
//		Workers    Workers            `json:"workers"`
//		Tracking   plan.Tracking      `json:"tracking,omitempty"`
//	}
//
// and converts with Tracking.Set and Tracking.JobStatus, the conditions with
// jobstatus.JobConditions and jobstatus.MetaConditions; the pod counts (active,
// ready, terminating) go wherever it likes. CheckStatusRoundTrip tests the
// conversion. The JSON names are those of batchv1.JobStatus, so a CRD schema can
// copy that type's.
type Tracking struct {
	// StartTime is when the owner started running (unset while suspended).
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// CompletionTime is when it completed (set with the Complete condition).
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Succeeded and Failed count the finished pods that are counted for good.
	Succeeded int32 `json:"succeeded,omitempty"`
	Failed    int32 `json:"failed,omitempty"`
	// CompletedIndexes and FailedIndexes are the finished indexes of an Indexed
	// owner ("1,3-5").
	CompletedIndexes string  `json:"completedIndexes,omitempty"`
	FailedIndexes    *string `json:"failedIndexes,omitempty"`
	// UncountedTerminatedPods is the ledger of finished pods recorded but not yet
	// counted (their tracking finalizer is still on).
	UncountedTerminatedPods *batchv1.UncountedTerminatedPods `json:"uncountedTerminatedPods,omitempty"`
}

// Set sets t to the Tracking part of st, copied: t shares nothing with st.
func (t *Tracking) Set(st *batchv1.JobStatus) {
	from := Tracking{
		StartTime:               st.StartTime,
		CompletionTime:          st.CompletionTime,
		Succeeded:               st.Succeeded,
		Failed:                  st.Failed,
		CompletedIndexes:        st.CompletedIndexes,
		FailedIndexes:           st.FailedIndexes,
		UncountedTerminatedPods: st.UncountedTerminatedPods,
	}
	from.DeepCopyInto(t)
}

// JobStatus returns a batchv1.JobStatus holding t, with no conditions and no pod
// counts: the caller adds its own. It shares t's pointers.
func (t *Tracking) JobStatus() batchv1.JobStatus {
	return batchv1.JobStatus{
		StartTime:               t.StartTime,
		CompletionTime:          t.CompletionTime,
		Succeeded:               t.Succeeded,
		Failed:                  t.Failed,
		CompletedIndexes:        t.CompletedIndexes,
		FailedIndexes:           t.FailedIndexes,
		UncountedTerminatedPods: t.UncountedTerminatedPods,
	}
}

// DeepCopyInto copies t into out, sharing nothing (for generated deep copies of a
// custom resource that embeds a Tracking).
func (t *Tracking) DeepCopyInto(out *Tracking) {
	*out = *t
	out.StartTime = t.StartTime.DeepCopy()
	out.CompletionTime = t.CompletionTime.DeepCopy()
	if t.FailedIndexes != nil {
		s := *t.FailedIndexes
		out.FailedIndexes = &s
	}
	out.UncountedTerminatedPods = t.UncountedTerminatedPods.DeepCopy()
}

// DeepCopy returns a copy of t that shares nothing with it.
func (t *Tracking) DeepCopy() *Tracking {
	if t == nil {
		return nil
	}
	out := new(Tracking)
	t.DeepCopyInto(out)
	return out
}
