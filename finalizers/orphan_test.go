package finalizers_test

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
)

const me = "example.com/my-job-controller"

func orphanPod(phase corev1.PodPhase, fins []string, refs ...metav1.OwnerReference) *corev1.Pod {
	p := newPod("p", fins...)
	p.OwnerReferences = refs
	p.Status.Phase = phase
	return p
}

func jobRef(uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: uid, Controller: ptr.To(true)}
}

func job(uid types.UID, managedBy *string, conds ...batchv1.JobConditionType) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j", UID: uid}}
	j.Spec.ManagedBy = managedBy
	for _, c := range conds {
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: c, Status: corev1.ConditionTrue})
	}
	return j
}

func TestDecideOrphan(t *testing.T) {
	withFin := []string{other, finalizers.Name}
	tests := []struct {
		name           string
		pod            *corev1.Pod
		job            *batchv1.Job
		controllerName string
		wantRemove     bool
		wantReason     string
	}{
		{
			name:           "nil pod",
			pod:            nil,
			controllerName: me,
			wantReason:     finalizers.ReasonNoFinalizer,
		},
		{
			name:           "no finalizer: nothing to do even without controller",
			pod:            orphanPod(corev1.PodSucceeded, []string{other}),
			controllerName: me,
			wantReason:     finalizers.ReasonNoFinalizer,
		},
		{
			name:           "no controller reference",
			pod:            orphanPod(corev1.PodSucceeded, withFin),
			controllerName: me,
			wantRemove:     true,
			wantReason:     finalizers.ReasonNoController,
		},
		{
			name:           "no controller reference, pod still running: removed too",
			pod:            orphanPod(corev1.PodRunning, withFin),
			controllerName: me,
			wantRemove:     true,
			wantReason:     finalizers.ReasonNoController,
		},
		{
			name: "owner reference that is not a controller counts as none",
			pod: orphanPod(corev1.PodFailed, withFin, metav1.OwnerReference{
				APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: "job-uid",
			}),
			job:            job("job-uid", ptr.To(me)),
			controllerName: me,
			wantRemove:     true,
			wantReason:     finalizers.ReasonNoController,
		},
		{
			name: "controller is not a Job",
			pod: orphanPod(corev1.PodSucceeded, withFin, metav1.OwnerReference{
				APIVersion: "example.com/v1", Kind: "TrainingRun", Name: "t", UID: "t-uid", Controller: ptr.To(true),
			}),
			controllerName: me,
			wantReason:     finalizers.ReasonNotJob,
		},
		{
			name: "controller kind Job of another group",
			pod: orphanPod(corev1.PodSucceeded, withFin, metav1.OwnerReference{
				APIVersion: "example.com/v1", Kind: "Job", Name: "j", UID: "job-uid", Controller: ptr.To(true),
			}),
			controllerName: me,
			wantReason:     finalizers.ReasonNotJob,
		},
		{
			name: "controller batch/v1 but not kind Job",
			pod: orphanPod(corev1.PodSucceeded, withFin, metav1.OwnerReference{
				APIVersion: "batch/v1", Kind: "CronJob", Name: "c", UID: "c-uid", Controller: ptr.To(true),
			}),
			controllerName: me,
			wantReason:     finalizers.ReasonNotJob,
		},
		{
			// One rule for every package (owner.BatchJob): a Job is a Job under any
			// version of group batch, and ownership is by UID; this one is gone.
			name: "controller batch Job of another version, gone",
			pod: orphanPod(corev1.PodSucceeded, withFin, metav1.OwnerReference{
				APIVersion: "batch/v2", Kind: "Job", Name: "j", UID: "job-uid", Controller: ptr.To(true),
			}),
			controllerName: me,
			wantRemove:     true,
			wantReason:     finalizers.ReasonJobGone,
		},
		{
			name:           "job missing",
			pod:            orphanPod(corev1.PodSucceeded, withFin, jobRef("job-uid")),
			job:            nil,
			controllerName: me,
			wantRemove:     true,
			wantReason:     finalizers.ReasonJobGone,
		},
		{
			name:           "job with the name has another UID (recreated)",
			pod:            orphanPod(corev1.PodSucceeded, withFin, jobRef("old-uid")),
			job:            job("new-uid", ptr.To(me)),
			controllerName: me,
			wantRemove:     true,
			wantReason:     finalizers.ReasonJobGone,
		},
		{
			name:           "job missing, managed elsewhere unknown: removed",
			pod:            orphanPod(corev1.PodRunning, withFin, jobRef("job-uid")),
			job:            nil,
			controllerName: "",
			wantRemove:     true,
			wantReason:     finalizers.ReasonJobGone,
		},
		{
			name:           "job finished Complete",
			pod:            orphanPod(corev1.PodSucceeded, withFin, jobRef("job-uid")),
			job:            job("job-uid", ptr.To(me), batchv1.JobSuccessCriteriaMet, batchv1.JobComplete),
			controllerName: me,
			wantRemove:     true,
			wantReason:     finalizers.ReasonJobFinished,
		},
		{
			name:           "job finished Failed",
			pod:            orphanPod(corev1.PodRunning, withFin, jobRef("job-uid")),
			job:            job("job-uid", ptr.To(me), batchv1.JobFailureTarget, batchv1.JobFailed),
			controllerName: me,
			wantRemove:     true,
			wantReason:     finalizers.ReasonJobFinished,
		},
		{
			name:           "interim conditions only: not finished",
			pod:            orphanPod(corev1.PodSucceeded, withFin, jobRef("job-uid")),
			job:            job("job-uid", ptr.To(me), batchv1.JobFailureTarget, batchv1.JobSuccessCriteriaMet),
			controllerName: me,
			wantReason:     finalizers.ReasonJobActive,
		},
		{
			name: "Complete condition False: not finished",
			pod:  orphanPod(corev1.PodSucceeded, withFin, jobRef("job-uid")),
			job: func() *batchv1.Job {
				j := job("job-uid", ptr.To(me))
				j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionFalse}}
				return j
			}(),
			controllerName: me,
			wantReason:     finalizers.ReasonJobActive,
		},
		{
			name:           "live job of ours",
			pod:            orphanPod(corev1.PodSucceeded, withFin, jobRef("job-uid")),
			job:            job("job-uid", ptr.To(me)),
			controllerName: me,
			wantReason:     finalizers.ReasonJobActive,
		},
		{
			name:           "managedBy another controller",
			pod:            orphanPod(corev1.PodSucceeded, withFin, jobRef("job-uid")),
			job:            job("job-uid", ptr.To("example.com/someone-else")),
			controllerName: me,
			wantReason:     finalizers.ReasonManagedElsewhere,
		},
		{
			name:           "managedBy another controller, even when finished",
			pod:            orphanPod(corev1.PodSucceeded, withFin, jobRef("job-uid")),
			job:            job("job-uid", ptr.To("example.com/someone-else"), batchv1.JobComplete),
			controllerName: me,
			wantReason:     finalizers.ReasonManagedElsewhere,
		},
		{
			name:           "unset managedBy belongs to the built-in controller, not to us",
			pod:            orphanPod(corev1.PodSucceeded, withFin, jobRef("job-uid")),
			job:            job("job-uid", nil, batchv1.JobComplete),
			controllerName: me,
			wantReason:     finalizers.ReasonManagedElsewhere,
		},
		{
			name:           "unset managedBy, we are the built-in controller, finished",
			pod:            orphanPod(corev1.PodSucceeded, withFin, jobRef("job-uid")),
			job:            job("job-uid", nil, batchv1.JobComplete),
			controllerName: batchv1.JobControllerName,
			wantRemove:     true,
			wantReason:     finalizers.ReasonJobFinished,
		},
		{
			name:           "explicit built-in managedBy, we are the built-in controller, live",
			pod:            orphanPod(corev1.PodSucceeded, withFin, jobRef("job-uid")),
			job:            job("job-uid", ptr.To(batchv1.JobControllerName)),
			controllerName: batchv1.JobControllerName,
			wantReason:     finalizers.ReasonJobActive,
		},
		{
			name:           "empty controller name matches no job",
			pod:            orphanPod(corev1.PodSucceeded, withFin, jobRef("job-uid")),
			job:            job("job-uid", nil, batchv1.JobFailed),
			controllerName: "",
			wantReason:     finalizers.ReasonManagedElsewhere,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := finalizers.DecideOrphan(owner.BatchJob, tc.pod, finalizers.JobOwner(tc.job), tc.controllerName)
			want := finalizers.OrphanDecision{Remove: tc.wantRemove, Reason: tc.wantReason, Message: tc.wantReason}
			if got != want {
				t.Errorf("DecideOrphan(%s, job, %q) = %+v, want %+v", tc.name, tc.controllerName, got, want)
			}
		})
	}
}

func TestDecideOrphanDoesNotAllocate(t *testing.T) {
	pod := orphanPod(corev1.PodSucceeded, []string{finalizers.Name}, jobRef("job-uid"))
	j := job("job-uid", ptr.To(me), batchv1.JobComplete)
	allocs := testing.AllocsPerRun(100, func() {
		_ = finalizers.DecideOrphan(owner.BatchJob, pod, finalizers.JobOwner(j), me)
	})
	if allocs != 0 {
		t.Errorf("DecideOrphan allocates %v times per call, want 0", allocs)
	}
}

// The same rules for another kind of owner, with its own finalizer: a batch Job's
// finalizer or reference is someone else's business.
func TestDecideOrphanOtherKind(t *testing.T) {
	kind := owner.Kind{Group: "ml.example.com", Version: "v1alpha1", Kind: "TrainingJob", Finalizer: "ml.example.com/worker-tracking"}
	ref := func(uid types.UID) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: "ml.example.com/v1alpha1", Kind: "TrainingJob", Name: "t", UID: uid, Controller: ptr.To(true)}
	}
	mine := []string{other, kind.Finalizer}
	live := &finalizers.OrphanOwner{UID: "t-uid", ManagedBy: me}
	tests := []struct {
		name        string
		pod         *corev1.Pod
		own         *finalizers.OrphanOwner
		wantRemove  bool
		wantReason  string
		wantMessage string // "" when it is wantReason
	}{
		{name: "only the batch finalizer", pod: orphanPod(corev1.PodSucceeded, []string{finalizers.Name}), wantReason: finalizers.ReasonNoFinalizer},
		{name: "no controller", pod: orphanPod(corev1.PodSucceeded, mine), wantRemove: true, wantReason: finalizers.ReasonNoController},
		{name: "a batch Job controls it", pod: orphanPod(corev1.PodSucceeded, mine, jobRef("t-uid")), own: live, wantReason: finalizers.ReasonNotJob, wantMessage: "pod is controlled by an object that is not a TrainingJob"},
		{name: "owner gone", pod: orphanPod(corev1.PodSucceeded, mine, ref("t-uid")), wantRemove: true, wantReason: finalizers.ReasonJobGone, wantMessage: "controlling TrainingJob no longer exists"},
		{name: "owner recreated under the name", pod: orphanPod(corev1.PodSucceeded, mine, ref("old")), own: live, wantRemove: true, wantReason: finalizers.ReasonJobGone, wantMessage: "controlling TrainingJob no longer exists"},
		{name: "owner known gone", pod: orphanPod(corev1.PodSucceeded, mine, ref("t-uid")), own: &finalizers.OrphanOwner{Gone: true}, wantRemove: true, wantReason: finalizers.ReasonJobGone, wantMessage: "controlling TrainingJob no longer exists"},
		{name: "owner known gone, its facts not read", pod: orphanPod(corev1.PodSucceeded, mine, ref("t-uid")), own: &finalizers.OrphanOwner{UID: "t-uid", ManagedBy: me, Gone: true}, wantRemove: true, wantReason: finalizers.ReasonJobGone, wantMessage: "controlling TrainingJob no longer exists"},
		{name: "owner managed elsewhere", pod: orphanPod(corev1.PodSucceeded, mine, ref("t-uid")), own: &finalizers.OrphanOwner{UID: "t-uid", ManagedBy: "x/y", Finished: true}, wantReason: finalizers.ReasonManagedElsewhere, wantMessage: "controlling TrainingJob is managed by another controller"},
		{name: "owner finished", pod: orphanPod(corev1.PodRunning, mine, ref("t-uid")), own: &finalizers.OrphanOwner{UID: "t-uid", ManagedBy: me, Finished: true}, wantRemove: true, wantReason: finalizers.ReasonJobFinished, wantMessage: "controlling TrainingJob has finished"},
		{name: "owner live", pod: orphanPod(corev1.PodSucceeded, mine, ref("t-uid")), own: live, wantReason: finalizers.ReasonJobActive, wantMessage: "controlling TrainingJob is live and unfinished"},
		{name: "owner without managedBy is ours, finished", pod: orphanPod(corev1.PodRunning, mine, ref("t-uid")), own: &finalizers.OrphanOwner{UID: "t-uid", Finished: true}, wantRemove: true, wantReason: finalizers.ReasonJobFinished, wantMessage: "controlling TrainingJob has finished"},
		{name: "owner without managedBy is ours, live", pod: orphanPod(corev1.PodSucceeded, mine, ref("t-uid")), own: &finalizers.OrphanOwner{UID: "t-uid"}, wantReason: finalizers.ReasonJobActive, wantMessage: "controlling TrainingJob is live and unfinished"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := finalizers.DecideOrphan(kind, tt.pod, tt.own, me)
			wantMessage := tt.wantMessage
			if wantMessage == "" {
				wantMessage = tt.wantReason
			}
			want := finalizers.OrphanDecision{Remove: tt.wantRemove, Reason: tt.wantReason, Message: wantMessage}
			if got != want {
				t.Errorf("DecideOrphan(%s) = %+v, want %+v", tt.name, got, want)
			}
		})
	}
	// The same pod reference under the batch kind is a Job's: the TrainingJob's
	// finalizer is then not the one the decision looks at.
	j := job("job-uid", ptr.To(me), batchv1.JobComplete)
	pod := orphanPod(corev1.PodSucceeded, []string{finalizers.Name}, jobRef("job-uid"))
	want := finalizers.OrphanDecision{Remove: true, Reason: finalizers.ReasonJobFinished, Message: finalizers.ReasonJobFinished}
	if got := finalizers.DecideOrphan(owner.BatchJob, pod, finalizers.JobOwner(j), me); got != want {
		t.Errorf("DecideOrphan(BatchJob, finished Job) = %+v, want %+v", got, want)
	}
	if got := finalizers.DecideOrphan(kind, pod, finalizers.JobOwner(j), me); got.Remove || got.Reason != finalizers.ReasonNoFinalizer {
		t.Errorf("DecideOrphan(TrainingJob, pod with the batch finalizer) = %+v, want to keep it (%s)", got, finalizers.ReasonNoFinalizer)
	}
	if finalizers.JobOwner(nil) != nil {
		t.Error("JobOwner(nil) != nil")
	}
}
