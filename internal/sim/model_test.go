package sim

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// The model must catch a controller that gets counting wrong. Each case plays the
// controller's part by hand, writing to the cluster directly, and expects the
// named invariant to break.
func TestModelCatchesBrokenControllers(t *testing.T) {
	removeFinalizer := []byte(`{"metadata":{"$deleteFromPrimitiveList/finalizers":["` + batchv1.JobTrackingFinalizer + `"]}}`)
	cases := []struct {
		name    string
		indexed bool
		elastic bool // parallelism = completions, so succeeded may go down
		do      func(t *testing.T, h *harness)
		want    Invariant
	}{
		{
			name: "finalizer of a succeeded pod removed before it was recorded",
			do: func(t *testing.T, h *harness) {
				p := h.addPod(t, -1)
				h.must(t, h.k().Succeed(Namespace, p))
				h.patch(t, p, removeFinalizer)
			},
			want: InvCount,
		},
		{
			name: "a running pod recorded as failed loses its finalizer while the Job is not failing",
			do: func(t *testing.T, h *harness) {
				p := h.addPod(t, -1)
				h.status(t, func(s *batchv1.JobStatus) { s.UncountedTerminatedPods.Failed = []types.UID{h.uid(p)} })
				h.patch(t, p, removeFinalizer)
			},
			want: InvCount,
		},
		{
			name: "counted while its pod still carries the finalizer",
			do: func(t *testing.T, h *harness) {
				p := h.addPod(t, -1)
				h.must(t, h.k().Succeed(Namespace, p))
				h.status(t, func(s *batchv1.JobStatus) { s.UncountedTerminatedPods.Succeeded = []types.UID{h.uid(p)} })
				h.status(t, func(s *batchv1.JobStatus) { s.UncountedTerminatedPods.Succeeded = nil; s.Succeeded = 1 })
			},
			want: InvCount,
		},
		{
			name: "recorded again after it was counted",
			do: func(t *testing.T, h *harness) {
				p := h.addPod(t, -1)
				h.must(t, h.k().Succeed(Namespace, p))
				h.status(t, func(s *batchv1.JobStatus) { s.UncountedTerminatedPods.Succeeded = []types.UID{h.uid(p)} })
				h.patch(t, p, removeFinalizer)
				h.status(t, func(s *batchv1.JobStatus) { s.UncountedTerminatedPods.Succeeded = nil; s.Succeeded = 1 })
				h.status(t, func(s *batchv1.JobStatus) { s.UncountedTerminatedPods.Succeeded = []types.UID{h.uid(p)} })
			},
			want: InvCountedTwice,
		},
		{
			name: "the counter grows by more than the UIDs that left the ledger",
			do: func(t *testing.T, h *harness) {
				h.status(t, func(s *batchv1.JobStatus) { s.Failed = 2 })
			},
			want: InvCount,
		},
		{
			name:    "an index below completions drops out of completedIndexes",
			indexed: true,
			elastic: true,
			do: func(t *testing.T, h *harness) {
				p := h.addPod(t, 1)
				h.must(t, h.k().Succeed(Namespace, p))
				h.status(t, func(s *batchv1.JobStatus) { s.CompletedIndexes, s.Succeeded = "1", 1 })
				h.patch(t, p, removeFinalizer)
				h.status(t, func(s *batchv1.JobStatus) { s.CompletedIndexes, s.Succeeded = "", 0 })
			},
			want: InvBackwards,
		},
		{
			name:    "finalizer of a succeeded Indexed pod removed before its index was recorded",
			indexed: true,
			do: func(t *testing.T, h *harness) {
				p := h.addPod(t, 2)
				h.must(t, h.k().Succeed(Namespace, p))
				h.patch(t, p, removeFinalizer)
			},
			want: InvRecordFirst,
		},
		{
			name:    "a pod created for an index already completed",
			indexed: true,
			do: func(t *testing.T, h *harness) {
				p := h.addPod(t, 1)
				h.must(t, h.k().Succeed(Namespace, p))
				h.status(t, func(s *batchv1.JobStatus) { s.CompletedIndexes, s.Succeeded = "1", 1 })
				h.patch(t, p, removeFinalizer)
				h.addPod(t, 1)
			},
			want: InvSucceededIndexCreated,
		},
		{
			name:    "a pod created for an index that holds a live pod",
			indexed: true,
			do: func(t *testing.T, h *harness) {
				h.addPod(t, 0)
				h.addPod(t, 0)
			},
			want: InvTwoLivePods,
		},
		{
			name:    "two active pods for one index long after any fault",
			indexed: true,
			do: func(t *testing.T, h *harness) {
				h.addPod(t, 0)
				o := h.addOrphan(t)
				h.patch(t, o, []byte(`{"metadata":{"annotations":{"`+batchv1.JobCompletionIndexAnnotation+`":"0"}}}`))
				h.patch(t, o, h.adoptPatch(true)) // an adopted orphan may join an index's pod
				h.w.checkStep()
			},
			want: InvDuplicateIndex,
		},
		{
			name: "more active pods than parallelism long after any fault",
			do: func(t *testing.T, h *harness) {
				for range 3 {
					h.addPod(t, -1)
				}
				h.w.checkStep()
			},
			want: InvOverParallelism,
		},
		{
			name: "a status write the API server refuses",
			do: func(t *testing.T, h *harness) {
				job, err := h.w.cluster.Jobs().Get(Namespace, JobName)
				require.NoError(t, err)
				job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}
				_, err = h.w.cluster.UpdateJobStatus(context.Background(), job)
				require.Error(t, err, "the cluster refuses Failed without FailureTarget")
				h.w.checkCalls()
			},
			want: InvInvalidStatus,
		},
		{
			name: "a released pod keeps the tracking finalizer",
			do: func(t *testing.T, h *harness) {
				p := h.addPod(t, -1)
				h.patch(t, p, h.dropOwner(false))
			},
			want: InvReleased,
		},
		{
			name: "a pod released before it was recorded is counted",
			do: func(t *testing.T, h *harness) {
				p := h.addPod(t, -1)
				h.must(t, h.k().Succeed(Namespace, p))
				h.patch(t, p, h.dropOwner(true))
				h.status(t, func(s *batchv1.JobStatus) { s.UncountedTerminatedPods.Succeeded = []types.UID{h.uid(p)} })
			},
			want: InvReleased,
		},
		{
			name: "an orphan adopted without the tracking finalizer",
			do: func(t *testing.T, h *harness) {
				p := h.addOrphan(t)
				h.patch(t, p, h.adoptPatch(false))
			},
			want: InvAdoption,
		},
		{
			name: "an adopted pod counted, then adopted again from a stale cache and recorded again",
			do: func(t *testing.T, h *harness) {
				p := h.addOrphan(t)
				h.must(t, h.k().Run(Namespace, p))
				h.must(t, h.k().Fail(Namespace, p, 1))
				h.patch(t, p, h.adoptPatch(true))
				h.status(t, func(s *batchv1.JobStatus) { s.UncountedTerminatedPods.Failed = []types.UID{h.uid(p)} })
				h.patch(t, p, removeFinalizer)
				h.status(t, func(s *batchv1.JobStatus) { s.UncountedTerminatedPods.Failed = nil; s.Failed = 1 })
				h.patch(t, p, h.adoptPatch(true))
				h.status(t, func(s *batchv1.JobStatus) { s.UncountedTerminatedPods.Failed = []types.UID{h.uid(p)} })
			},
			want: InvCountedTwice,
		},
		{
			name: "an orphan adopted by the deleted Job",
			do: func(t *testing.T, h *harness) {
				p := h.addOrphan(t)
				h.must(t, h.w.cluster.Jobs().Delete(Namespace, JobName))
				h.patch(t, p, h.adoptPatch(true))
			},
			want: InvAdoption,
		},
		{
			name: "a pod created for the deleted Job outside a sync",
			do: func(t *testing.T, h *harness) {
				h.must(t, h.w.cluster.Jobs().Delete(Namespace, JobName))
				h.addPod(t, -1)
			},
			want: InvCreatedAfterDelete,
		},
		{
			name: "a pod of the deleted Job keeps the tracking finalizer at the end",
			do: func(t *testing.T, h *harness) {
				h.addPod(t, -1)
				h.must(t, h.w.cluster.Jobs().Delete(Namespace, JobName))
				h.w.cluster.CollectGarbage()
				h.w.checkEnd()
			},
			want: InvFinalizerLeft,
		},
		{
			name: "the Job never finishes",
			do: func(t *testing.T, h *harness) {
				h.w.checkEnd()
			},
			want: InvNotFinished,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.indexed, tc.elastic)
			tc.do(t, h)
			require.NotEmpty(t, h.w.violations, "no invariant broke")
			require.Equal(t, tc.want, h.w.violations[0].Invariant, "first violation: %v", h.w.violations[0])
			t.Log(h.w.violations[0])
		})
	}
}

// harness is a world whose controller is the test itself.
type harness struct {
	w   *world
	job *batchv1.Job
	n   int
}

func newHarness(t *testing.T, indexed, elastic bool) *harness {
	job := reconciletest.NewJob(Namespace, JobName, 4, 2)
	if elastic {
		job.Spec.Parallelism = ptr.To[int32](4)
	}
	if indexed {
		job.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	}
	w, err := newWorld(&Trace{Job: job})
	require.NoError(t, err)
	stored, err := w.cluster.Jobs().Get(Namespace, JobName)
	require.NoError(t, err)
	return &harness{w: w, job: stored}
}

func (h *harness) k() *reconciletest.Kubelet { return h.w.cluster.Kubelet() }

func (h *harness) must(t *testing.T, err error) {
	t.Helper()
	require.NoError(t, err)
}

// addPod creates a pod of the Job, with the tracking finalizer and, when index is
// not negative, that completion index; it returns the pod's name.
func (h *harness) addPod(t *testing.T, index int) string {
	t.Helper()
	h.n++
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace:       Namespace,
		Name:            "p" + strconv.Itoa(h.n),
		Finalizers:      []string{batchv1.JobTrackingFinalizer},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(h.job, batchv1.SchemeGroupVersion.WithKind("Job"))},
	}}
	if index >= 0 {
		pod.Annotations = map[string]string{batchv1.JobCompletionIndexAnnotation: strconv.Itoa(index)}
	}
	_, err := h.w.cluster.AddPod(pod)
	require.NoError(t, err)
	return pod.Name
}

// addOrphan creates a pod from the Job's template (so it matches the generated
// selector) without a controller reference or finalizer; it returns its name.
func (h *harness) addOrphan(t *testing.T) string {
	t.Helper()
	h.n++
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: "o" + strconv.Itoa(h.n), Labels: h.job.Spec.Template.Labels}}
	_, err := h.w.cluster.AddPod(pod)
	require.NoError(t, err)
	return pod.Name
}

// adoptPatch makes the Job the controller of a pod, with the tracking finalizer
// when finalizer is set.
func (h *harness) adoptPatch(finalizer bool) []byte {
	ref := metav1.NewControllerRef(h.job, batchv1.SchemeGroupVersion.WithKind("Job"))
	fin := ""
	if finalizer {
		fin = `,"finalizers":["` + batchv1.JobTrackingFinalizer + `"]`
	}
	return []byte(`{"metadata":{"ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":"` + ref.Name +
		`","uid":"` + string(ref.UID) + `","controller":true}]` + fin + `}}`)
}

// dropOwner removes the Job's controller reference from a pod and, when finalizer
// is set, the tracking finalizer in the same write: a release.
func (h *harness) dropOwner(finalizer bool) []byte {
	fin := ""
	if finalizer {
		fin = `,"$deleteFromPrimitiveList/finalizers":["` + batchv1.JobTrackingFinalizer + `"]`
	}
	return []byte(`{"metadata":{"ownerReferences":[{"$patch":"delete","uid":"` + string(h.job.UID) + `"}]` + fin + `}}`)
}

func (h *harness) uid(name string) types.UID {
	p, err := h.w.cluster.GetPod(context.Background(), Namespace, name)
	if err != nil {
		return ""
	}
	return p.UID
}

func (h *harness) patch(t *testing.T, name string, data []byte) {
	t.Helper()
	_, err := h.w.cluster.PatchPodAs(Namespace, name, data)
	require.NoError(t, err)
}

// status writes the Job's status after f changed it, as the controller would.
func (h *harness) status(t *testing.T, f func(*batchv1.JobStatus)) {
	t.Helper()
	job, err := h.w.cluster.Jobs().Get(Namespace, JobName)
	require.NoError(t, err)
	if job.Status.UncountedTerminatedPods == nil {
		job.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	if job.Status.StartTime == nil {
		job.Status.StartTime = ptr.To(metav1.NewTime(h.w.clock.Now()))
	}
	f(&job.Status)
	_, err = h.w.cluster.UpdateJobStatus(context.Background(), job)
	require.NoError(t, err)
}

// The model catches a controller of a custom owner that marks its pods as another
// kind's: a controller reference to a batch/v1 Job, or the Job's tracking
// finalizer (the two mistakes a controller makes when it presents its resource as a
// Job). The same seed with the right kind runs clean.
func TestModelCatchesWrongOwner(t *testing.T) {
	batchFinalizer := TaskKind
	batchFinalizer.Finalizer = batchv1.JobTrackingFinalizer
	cases := []struct {
		name string
		ctl  owner.Kind
		want Invariant
	}{
		{name: "the controller's kind", ctl: TaskKind},
		{name: "pods referencing a batch/v1 Job", ctl: owner.BatchJob, want: InvWrongOwner},
		{name: "pods tracked by the batch/v1 Job's finalizer", ctl: batchFinalizer, want: InvWrongOwner},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newGenerator(Config{Seed: 1, FaultRate: 0.1, Owner: TaskKind})
			w, err := newWorld(g.trace())
			require.NoError(t, err)
			w.ctlKind = tc.ctl
			r, err := w.newReconciler()
			require.NoError(t, err)
			w.use(r)
			g.run(w)
			res := w.result()
			require.Positive(t, res.Pods, "the run created pods")
			if tc.want == "" {
				require.True(t, res.OK(), "%v", res.Violations)
				require.True(t, res.Finished)
				return
			}
			require.False(t, res.OK(), "the run ended clean: %s", res.Summary())
			require.Equal(t, tc.want, res.Violations[0].Invariant, "%v", res.Violations[0])
		})
	}
}
