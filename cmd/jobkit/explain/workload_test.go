package explain_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/cmd/jobkit/explain"
	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
)

var trainingKind = owner.Kind{Group: "ml.example.com", Version: "v1alpha1", Kind: "TrainingJob", Finalizer: "ml.example.com/worker-tracking"}

// trainingPod returns pod i of the workload of job (the same identity and spec),
// controlled by a TrainingJob and tracked by its finalizer.
func trainingPod(job *batchv1.Job, i int, phase corev1.PodPhase) *corev1.Pod {
	pod := newPod(job, i, phase)
	pod.OwnerReferences = []metav1.OwnerReference{trainingKind.NewControllerRef(job)}
	pod.Finalizers = []string{trainingKind.Finalizer}
	return pod
}

func TestExplainOwnerOfAnotherKind(t *testing.T) {
	job := newJob(3, 3, true)
	job.Status.Active, job.Status.Failed = 1, 1
	w := *plan.JobWorkload(job)

	running := trainingPod(job, 0, corev1.PodRunning)
	succeeded := trainingPod(job, 1, corev1.PodSucceeded)
	// Finished with the batch/v1 Job's finalizer only: not this owner's tracking
	// finalizer, so counted already.
	otherFinalizer := trainingPod(job, 2, corev1.PodFailed)
	otherFinalizer.Finalizers = []string{finalizers.Name}
	// A batch/v1 Job of the same name and UID-less match: another kind's pod.
	batchPod := newPod(job, 5, corev1.PodRunning)
	batchPod.Name, batchPod.UID = "batch-pod", "batch-pod"
	batchPod.OwnerReferences[0].UID = "batch-job-uid"
	// A pod of an earlier TrainingJob of the same name, keeping the finalizer.
	earlier := trainingPod(job, 6, corev1.PodFailed)
	earlier.Name, earlier.UID = "earlier", "earlier"
	earlier.OwnerReferences[0].UID = "earlier-uid"
	// A pod of an earlier batch/v1 Job of the same name: not this owner's concern.
	earlierJob := newPod(job, 7, corev1.PodFailed)
	earlierJob.Name, earlierJob.UID = "earlier-job", "earlier-job"
	earlierJob.OwnerReferences[0].UID = "earlier-job-uid"
	pods := []*corev1.Pod{running, succeeded, otherFinalizer, batchPod, earlier, earlierJob}

	r, err := explain.Explain(&w, pods, explain.Options{Now: t0.Add(time.Minute), Owner: trainingKind})
	require.NoError(t, err)

	wantInfo := explain.JobInfo{APIVersion: "ml.example.com/v1alpha1", Kind: "TrainingJob", Finalizer: "ml.example.com/worker-tracking",
		Namespace: "ns", Name: "job", UID: string(jobUID), Mode: "Indexed", Completions: ptr.To[int32](3), Parallelism: 3}
	if diff := cmp.Diff(wantInfo, r.Job); diff != "" {
		t.Errorf("Job (-want +got):\n%s", diff)
	}
	wantClasses := map[string][]explain.Class{
		"job-0":       {explain.ClassActive},
		"job-1":       {explain.ClassSucceeded, explain.ClassUncounted},
		"job-2":       {explain.ClassFailed},
		"batch-pod":   {explain.ClassIgnored},
		"earlier":     {explain.ClassIgnored},
		"earlier-job": {explain.ClassIgnored},
	}
	if diff := cmp.Diff(wantClasses, classesOf(r)); diff != "" {
		t.Errorf("classes (-want +got):\n%s", diff)
	}
	notes := map[string]string{}
	for _, p := range r.Pods {
		notes[p.Name] = p.Note
	}
	require.Equal(t, "controlled by Job job", notes["batch-pod"])
	require.Equal(t, "controlled by an earlier TrainingJob job (uid earlier-uid)", notes["earlier"])
	require.Equal(t, "controlled by Job job", notes["earlier-job"])

	var actions []string
	for _, d := range r.Decisions {
		actions = append(actions, d.Action+" "+d.Pod)
	}
	// Index 2 failed and is replaced; index 1 is recorded and its finalizer goes.
	require.Equal(t, []string{"record ", "remove-finalizer job-1", "create "}, actions)

	wantDiags := []explain.Diagnostic{{Kind: explain.DiagFinalizerJobDeleted,
		Message: "pod earlier keeps the tracking finalizer of a deleted TrainingJob job (uid earlier-uid): controlling TrainingJob no longer exists; the orphan cleanup of the TrainingJob controller removes it"}}
	if diff := cmp.Diff(wantDiags, r.Diagnostics); diff != "" {
		t.Errorf("Diagnostics (-want +got):\n%s", diff)
	}

	var text strings.Builder
	require.NoError(t, r.Text(&text))
	for _, want := range []string{
		"TrainingJob ns/job (Indexed, completions 3, parallelism 3)\nowner kind ml.example.com/v1alpha1 TrainingJob, pods tracked by finalizer ml.example.com/worker-tracking\n",
		"Next sync: on the next change of the TrainingJob or its pods",
	} {
		require.Contains(t, text.String(), want)
	}
}

// A batch/v1 Job explained through a Workload without the Job object reads as
// through plan.JobWorkload's (with the Job).
func TestExplainJobWorkloadWithoutTheJob(t *testing.T) {
	job := newJob(4, 2, true)
	job.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
	job.Status.Active = 1
	failed := newPod(job, 1, corev1.PodFailed)
	failed.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.Time{Time: t0.Add(50 * time.Second)}}}}}
	pods := []*corev1.Pod{newPod(job, 0, corev1.PodRunning), failed, newPod(job, 2, corev1.PodSucceeded)}
	for _, kind := range []owner.Kind{{}, owner.BatchJob} {
		opts := explain.Options{Now: t0.Add(time.Minute), Owner: kind}
		want, err := explain.Explain(plan.JobWorkload(job), pods, opts)
		require.NoError(t, err)
		w := plan.JobWorkload(job)
		w.Object = nil
		got, err := explain.Explain(w, pods, opts)
		require.NoError(t, err)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Explain of the Workload without the Job differs from with it, Owner %+v (-with +without):\n%s", kind, diff)
		}
		require.Empty(t, got.Job.Kind, "a batch/v1 Job's report names no kind")
	}
}

func TestExplainOwnerOfAnotherKindErrors(t *testing.T) {
	job := newJob(1, 1, false)
	tests := []struct {
		name    string
		w       func() plan.Workload
		opts    explain.Options
		wantErr string
		wantIs  error
	}{
		{
			name:    "owner kind without a finalizer",
			w:       func() plan.Workload { return *plan.JobWorkload(job) },
			opts:    explain.Options{Owner: owner.Kind{Group: "ml.example.com", Version: "v1", Kind: "TrainingJob"}},
			wantErr: `Options.Owner: invalid owner kind: Finalizer "": required`,
			wantIs:  owner.ErrInvalidKind,
		},
		{
			name: "unplannable spec",
			w: func() plan.Workload {
				w := *plan.JobWorkload(job)
				w.Spec.Template = nil
				return w
			},
			opts:    explain.Options{Owner: trainingKind},
			wantErr: "planning trainingjob ns/job: ",
		},
		{
			name:    "assumption matching nothing",
			w:       func() plan.Workload { return *plan.JobWorkload(job) },
			opts:    explain.Options{Owner: trainingKind, Assume: []explain.Assumption{{Selector: "all", Outcome: explain.OutcomeSucceed}}},
			wantErr: `bad --assume "all:succeed": no active pod of the TrainingJob matches`,
			wantIs:  explain.ErrBadAssumption,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := tt.w()
			_, err := explain.Explain(&w, nil, tt.opts)
			require.ErrorContains(t, err, tt.wantErr)
			if tt.wantIs != nil {
				require.ErrorIs(t, err, tt.wantIs)
			}
		})
	}
}

func TestWorkloadOf(t *testing.T) {
	start := metav1.NewTime(t0)
	tests := []struct {
		name    string
		in      string
		want    plan.Workload
		wantErr string
	}{
		{
			name: "Job-named fields, others ignored",
			in: `{"apiVersion": "ml.example.com/v1alpha1", "kind": "TrainingJob",
				"metadata": {"namespace": "ns", "name": "run", "uid": "u1", "deletionTimestamp": "2026-03-01T10:00:00Z"},
				"spec": {"workers": 8, "completions": 4, "parallelism": 2, "completionMode": "Indexed", "backoffLimit": 3,
					"backoffLimitPerIndex": 1, "maxFailedIndexes": 2, "podReplacementPolicy": "Failed", "suspend": true,
					"activeDeadlineSeconds": 60, "managedBy": "example.com/ctl",
					"podFailurePolicy": {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]},
					"successPolicy": {"rules": [{"succeededCount": 1}]},
					"selector": {"matchLabels": {"run": "u1"}},
					"template": {"metadata": {"labels": {"run": "u1"}}, "spec": {"restartPolicy": "Never", "containers": [{"name": "w"}]}}},
				"status": {"active": 1, "failed": 2, "startTime": "2026-03-01T10:00:00Z", "lastWorker": "w-3"}}`,
			want: plan.Workload{Namespace: "ns", Name: "run", UID: "u1", Deleting: true,
				Spec: plan.Spec{Completions: ptr.To[int32](4), Parallelism: ptr.To[int32](2), CompletionMode: ptr.To(batchv1.IndexedCompletion),
					BackoffLimit: ptr.To[int32](3), BackoffLimitPerIndex: ptr.To[int32](1), MaxFailedIndexes: ptr.To[int32](2),
					PodReplacementPolicy: ptr.To(batchv1.Failed), Suspend: ptr.To(true), ActiveDeadlineSeconds: ptr.To[int64](60),
					ManagedBy: ptr.To("example.com/ctl"),
					PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: batchv1.PodFailurePolicyActionFailJob,
						OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}}}}},
					SuccessPolicy: &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To[int32](1)}}},
					Selector:      &metav1.LabelSelector{MatchLabels: map[string]string{"run": "u1"}},
					Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"run": "u1"}},
						Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "w"}}}}},
				Status: batchv1.JobStatus{Active: 1, Failed: 2, StartTime: &start}},
		},
		{
			name: "no spec and no status",
			in:   `{"apiVersion": "ml.example.com/v1alpha1", "kind": "TrainingJob", "metadata": {"namespace": "ns", "name": "run"}}`,
			want: plan.Workload{Namespace: "ns", Name: "run"},
		},
		{
			name:    "spec not an object",
			in:      `{"apiVersion": "ml.example.com/v1alpha1", "kind": "TrainingJob", "metadata": {"namespace": "ns", "name": "run"}, "spec": [1]}`,
			wantErr: "TrainingJob ns/run: bad owner object: spec: want an object, got [1]",
		},
		{
			name:    "a number of the wrong type",
			in:      `{"apiVersion": "ml.example.com/v1alpha1", "kind": "TrainingJob", "metadata": {"namespace": "ns", "name": "run"}, "spec": {"parallelism": 1, "completions": "4"}}`,
			wantErr: `TrainingJob ns/run: bad owner object: spec.completions: want int32, got string ("4")`,
		},
		{
			name:    "a number out of range",
			in:      `{"apiVersion": "ml.example.com/v1alpha1", "kind": "TrainingJob", "metadata": {"namespace": "ns", "name": "run"}, "spec": {"parallelism": 3000000000}}`,
			wantErr: `TrainingJob ns/run: bad owner object: spec.parallelism: want int32, got number 3000000000 (3000000000)`,
		},
		{
			name:    "a nested field",
			in:      `{"apiVersion": "ml.example.com/v1alpha1", "kind": "TrainingJob", "metadata": {"namespace": "ns", "name": "run"}, "spec": {"selector": {"matchLabels": {"a": 1}}}}`,
			wantErr: `TrainingJob ns/run: bad owner object: spec.selector.matchLabels: want string, got number ({"matchLabels":{"a":1}})`,
		},
		{
			name:    "a status time",
			in:      `{"apiVersion": "ml.example.com/v1alpha1", "kind": "TrainingJob", "metadata": {"namespace": "ns", "name": "run"}, "status": {"active": 1, "startTime": "soon"}}`,
			wantErr: `TrainingJob ns/run: bad owner object: status.startTime: "soon": parsing time "soon"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := &unstructured.Unstructured{}
			require.NoError(t, u.UnmarshalJSON([]byte(tt.in)))
			before := u.DeepCopy()
			got, err := explain.WorkloadOf(u, nil)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.ErrorIs(t, err, explain.ErrBadOwner)
				return
			}
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("WorkloadOf (-want +got):\n%s", diff)
			}
			require.Equal(t, before, u, "WorkloadOf modified its input")
		})
	}
}

func TestReadOwners(t *testing.T) {
	const in = `apiVersion: ml.example.com/v1alpha1
kind: TrainingJob
metadata: {name: a, namespace: ns}
---
apiVersion: ml.example.com/v1beta1
kind: TrainingJob
metadata: {name: b, namespace: ns}
---
apiVersion: other.example.com/v1alpha1
kind: TrainingJob
metadata: {name: c, namespace: ns}
---
apiVersion: batch/v1
kind: Job
metadata: {name: d, namespace: ns}
`
	tests := []struct {
		name        string
		kind        owner.Kind
		wantOwners  []string
		wantJobs    int
		wantIgnored map[string]int
	}{
		{name: "no owner kind", wantJobs: 1, wantIgnored: map[string]int{
			"ml.example.com/v1alpha1 TrainingJob": 1, "ml.example.com/v1beta1 TrainingJob": 1, "other.example.com/v1alpha1 TrainingJob": 1}},
		{name: "any version of the group", kind: trainingKind, wantOwners: []string{"ns/a", "ns/b"}, wantJobs: 1,
			wantIgnored: map[string]int{"other.example.com/v1alpha1 TrainingJob": 1}},
		{name: "batch Jobs stay Jobs", kind: owner.BatchJob, wantJobs: 1, wantIgnored: map[string]int{
			"ml.example.com/v1alpha1 TrainingJob": 1, "ml.example.com/v1beta1 TrainingJob": 1, "other.example.com/v1alpha1 TrainingJob": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := explain.Objects{Owner: tt.kind}
			require.NoError(t, explain.ReadObjects("in.yaml", strings.NewReader(in), &objs))
			var got []string
			for _, o := range objs.Owners {
				got = append(got, o.GetNamespace()+"/"+o.GetName())
			}
			require.Equal(t, tt.wantOwners, got)
			require.Len(t, objs.Jobs, tt.wantJobs)
			require.Equal(t, tt.wantIgnored, objs.Ignored)
		})
	}
}

func TestPickOwner(t *testing.T) {
	obj := func(ns, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetNamespace(ns)
		u.SetName(name)
		return u
	}
	objs := explain.Objects{Owner: trainingKind, Owners: []*unstructured.Unstructured{obj("a", "x"), obj("b", "x")}, Pods: []*corev1.Pod{{}}}
	tests := []struct {
		name            string
		objs            *explain.Objects
		namespace, pick string
		want            string
		wantErr         string
	}{
		{name: "by namespace and name", objs: &objs, namespace: "b", pick: "x", want: "b/x"},
		{name: "ambiguous", objs: &objs, pick: "x", wantErr: "the input holds 2 objects of kind TrainingJob.ml.example.com (a/x, b/x): name one"},
		{name: "missing", objs: &objs, pick: "y", wantErr: `no job: TrainingJob.ml.example.com "y" not found in the input (it holds a/x, b/x)`},
		{name: "none", objs: &explain.Objects{Owner: trainingKind, Jobs: []*batchv1.Job{{}}}, wantErr: "no job: the input holds no TrainingJob.ml.example.com (0 pod(s), 1 batch/v1 Job(s))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.objs.PickOwner(tt.namespace, tt.pick)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got.GetNamespace()+"/"+got.GetName())
		})
	}
}

// A batch/v1 Job read as an object of any kind gives the Workload plan reads of it.
func TestWorkloadOfAJob(t *testing.T) {
	job := newJob(4, 2, true)
	job.DeletionTimestamp = &metav1.Time{Time: t0}
	job.Spec.BackoffLimitPerIndex = ptr.To[int32](2)
	job.Spec.ManagedBy = ptr.To("example.com/ctl")
	job.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: batchv1.PodFailurePolicyActionIgnore,
		OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}}}}
	job.Status.CompletedIndexes = "0,2"
	job.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Failed: []types.UID{"p"}}
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(job)
	require.NoError(t, err)
	got, err := explain.WorkloadOf(&unstructured.Unstructured{Object: raw}, nil)
	require.NoError(t, err)
	want := *plan.JobWorkload(job)
	want.Object = nil // WorkloadOf reads the fields plan reads; the object stays the caller's
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("WorkloadOf(job) differs from plan.JobWorkload(job) (-want +got):\n%s", diff)
	}
}
