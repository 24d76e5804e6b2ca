package reconcile_test

import (
	"unsafe"

	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

var trimNow = time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)

// trimJob is a defaulted Job as the API server stores it, with a pod failure policy
// that reads exit codes of a named container and the DisruptionTarget condition.
func trimJob(mode batchv1.CompletionMode, completions, parallelism int32) *batchv1.Job {
	labels := map[string]string{batchv1.JobNameLabel: "train", batchv1.ControllerUidLabel: "job-uid"}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "ml", UID: "job-uid", Generation: 1},
		Spec: batchv1.JobSpec{
			Completions: ptr.To(completions), Parallelism: ptr.To(parallelism),
			CompletionMode: ptr.To(mode), BackoffLimit: ptr.To[int32](20),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{batchv1.ControllerUidLabel: "job-uid"}},
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
					ContainerName: ptr.To("main"), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}}},
				{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{
					{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}},
			}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       fatSpec(),
			},
		},
		Status: batchv1.JobStatus{StartTime: &metav1.Time{Time: trimNow.Add(-time.Hour)}},
	}
	if mode == batchv1.IndexedCompletion {
		job.Spec.BackoffLimit = nil
		job.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
		job.Spec.MaxFailedIndexes = ptr.To[int32](3)
		job.Spec.PodFailurePolicy.Rules = append(job.Spec.PodFailurePolicy.Rules, batchv1.PodFailurePolicyRule{
			Action: batchv1.PodFailurePolicyActionFailIndex, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
				Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{3}}})
	}
	return job
}

// fatSpec is a pod spec as the API server defaults it: a sidecar, a main container
// with environment, resources and mounts, volumes, tolerations and affinity.
func fatSpec() corev1.PodSpec {
	mounts := []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "kube-api-access-x7k2p", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}}
	res := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")},
	}
	container := func(name string) corev1.Container {
		return corev1.Container{
			Name: name, Image: "registry.example.com/ml/" + name + ":v1.2.3", Command: []string{"/bin/" + name}, Args: []string{"--epochs=10", "--lr=0.01"},
			Env:       []corev1.EnvVar{{Name: "DATA", Value: "/data"}, {Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
			Resources: res, VolumeMounts: mounts, TerminationMessagePath: "/dev/termination-log",
			TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullIfNotPresent,
		}
	}
	sidecar := container("proxy")
	sidecar.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	return corev1.PodSpec{
		InitContainers: []corev1.Container{container("setup"), sidecar},
		Containers:     []corev1.Container{container("main"), container("logger")},
		Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "kube-api-access-x7k2p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}}}}}}},
		RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: ptr.To[int64](30),
		DNSPolicy: corev1.DNSClusterFirst, ServiceAccountName: "default", SchedulerName: "default-scheduler",
		SecurityContext: &corev1.PodSecurityContext{}, EnableServiceLinks: ptr.To(true), PreemptionPolicy: ptr.To(corev1.PreemptLowerPriority),
		Priority: ptr.To[int32](0),
		Tolerations: []corev1.Toleration{
			{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
			{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)}},
		Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "gpu", Operator: corev1.NodeSelectorOpExists}}}}}}},
	}
}

// podState is what a test pod has been through.
type podState struct {
	phase       corev1.PodPhase
	ready       bool
	node        bool
	mainExit    *int32 // main's terminated exit code; nil while it runs
	restarts    int32
	disrupted   bool
	terminating bool
	orphan      bool // no owner reference and no finalizer
	released    bool // owned, but its labels no longer match
}

// fatPod is a pod of job as a cache holds it without a transform: the template's
// spec, the kubelet's status with images and addresses, managedFields.
func fatPod(job *batchv1.Job, i int, index string, s podState) *corev1.Pod {
	name := fmt.Sprintf("%s-%d", job.Name, i)
	created := trimNow.Add(-time.Hour + time.Duration(i)*time.Second)
	labels := map[string]string{}
	for k, v := range job.Spec.Template.Labels {
		labels[k] = v
	}
	if s.released {
		labels[batchv1.ControllerUidLabel] = "someone-else"
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: job.Namespace, UID: types.UID("uid-" + name), ResourceVersion: strconv.Itoa(1000 + i),
			GenerateName: job.Name + "-", Labels: labels, CreationTimestamp: metav1.NewTime(created),
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate,
				APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: fieldsV1(`{"f:status":{"f:conditions":{},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:startTime":{}}}`)}},
		},
		Spec: *job.Spec.Template.Spec.DeepCopy(),
		Status: corev1.PodStatus{
			Phase: s.phase, QOSClass: corev1.PodQOSBurstable, HostIP: "10.0.0.7", PodIP: "10.244.1." + strconv.Itoa(i%250),
			HostIPs: []corev1.HostIP{{IP: "10.0.0.7"}}, PodIPs: []corev1.PodIP{{IP: "10.244.1." + strconv.Itoa(i%250)}},
		},
	}
	if !s.orphan {
		pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))}
		pod.Finalizers = []string{batchv1.JobTrackingFinalizer}
	}
	if index != "" {
		pod.Annotations = map[string]string{batchv1.JobCompletionIndexAnnotation: index}
		pod.Labels[batchv1.JobCompletionIndexAnnotation] = index
		pod.Spec.Hostname = job.Name + "-" + index
	}
	if s.node {
		pod.Spec.NodeName = "node-" + strconv.Itoa(i%4)
	}
	if s.phase == corev1.PodPending && !s.node {
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable"}}
		return pod
	}
	started := metav1.NewTime(created.Add(5 * time.Second))
	pod.Status.StartTime = &started
	ready := corev1.ConditionFalse
	if s.ready {
		ready = corev1.ConditionTrue
	}
	pod.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(created)},
		{Type: corev1.PodReady, Status: ready, LastTransitionTime: metav1.NewTime(created.Add(time.Duration(i%7) * time.Second))},
	}
	if s.disrupted {
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "PreemptionByScheduler"})
	}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}
	status := func(c corev1.Container, state corev1.ContainerState) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: c.Name, State: state, Ready: s.ready, Started: ptr.To(true), RestartCount: s.restarts,
			Image: c.Image, ImageID: "registry.example.com/ml@sha256:0f3c9a", ContainerID: "containerd://" + name + c.Name,
			AllocatedResources: c.Resources.Requests, Resources: c.Resources.DeepCopy(),
			VolumeMounts: []corev1.VolumeMountStatus{{Name: "data", MountPath: "/data"}}}
	}
	done := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: started, FinishedAt: started}}
	pod.Status.InitContainerStatuses = []corev1.ContainerStatus{status(pod.Spec.InitContainers[0], done), status(pod.Spec.InitContainers[1], running)}
	main := running
	if s.mainExit != nil {
		reason := "Completed"
		if *s.mainExit != 0 {
			reason = "Error"
		}
		main = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: *s.mainExit, Reason: reason,
			Message: "epoch 7 of 10", StartedAt: started, FinishedAt: metav1.NewTime(created.Add(time.Minute))}}
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{status(pod.Spec.Containers[0], main), status(pod.Spec.Containers[1], main)}
	if s.restarts > 0 {
		pod.Status.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}
	}
	if s.terminating {
		pod.DeletionTimestamp = &metav1.Time{Time: trimNow.Add(-10 * time.Second)}
		pod.DeletionGracePeriodSeconds = ptr.To[int64](30)
	}
	return pod
}

// samePods compares the cached pods a plan names by identity (UID, name and
// resourceVersion): a plan of trimmed pods names the trimmed copies. Pods the plan
// creates (no UID) come from the template and are compared whole.
var samePods = cmp.Comparer(func(a, b *corev1.Pod) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.UID != "" || b.UID != "" {
		return a.UID == b.UID && a.Name == b.Name && a.ResourceVersion == b.ResourceVersion
	}
	return equality.Semantic.DeepEqual(a, b)
})

func TestTrimPodKeepsThePlan(t *testing.T) {
	exit := func(c int32) *int32 { return &c }
	run := podState{phase: corev1.PodRunning, ready: true, node: true}
	indexed := trimJob(batchv1.IndexedCompletion, 12, 6)
	nonIndexed := trimJob(batchv1.NonIndexedCompletion, 20, 4)
	suspended := trimJob(batchv1.NonIndexedCompletion, 20, 4)
	suspended.Spec.Suspend = ptr.To(true)
	replaceFailed := trimJob(batchv1.IndexedCompletion, 4, 4)
	replaceFailed.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
	cases := []struct {
		name string
		job  *batchv1.Job
		pods []*corev1.Pod
	}{{
		name: "indexed: running, succeeded, exit codes, disruption, terminating, pending",
		job:  indexed,
		pods: []*corev1.Pod{
			fatPod(indexed, 0, "0", run),
			fatPod(indexed, 1, "1", podState{phase: corev1.PodSucceeded, node: true, mainExit: exit(0)}),
			fatPod(indexed, 2, "2", podState{phase: corev1.PodFailed, node: true, mainExit: exit(3)}),
			fatPod(indexed, 3, "3", podState{phase: corev1.PodFailed, node: true, mainExit: exit(137), disrupted: true}),
			fatPod(indexed, 4, "4", podState{phase: corev1.PodRunning, node: true, terminating: true}),
			fatPod(indexed, 5, "5", podState{phase: corev1.PodPending}),
			fatPod(indexed, 6, "0", podState{phase: corev1.PodRunning, node: true, restarts: 2}), // a duplicate of index 0
			fatPod(indexed, 7, "7", podState{phase: corev1.PodFailed, node: true, mainExit: exit(1), restarts: 1}),
		},
	}, {
		name: "indexed: exit code 42 fails the Job",
		job:  indexed,
		pods: []*corev1.Pod{fatPod(indexed, 0, "0", run), fatPod(indexed, 1, "1", podState{phase: corev1.PodFailed, node: true, mainExit: exit(42)})},
	}, {
		name: "non-indexed: scale down by the removal order, an orphan, a released pod",
		job:  nonIndexed,
		pods: []*corev1.Pod{
			fatPod(nonIndexed, 0, "", run),
			fatPod(nonIndexed, 1, "", podState{phase: corev1.PodRunning, node: true, restarts: 3}),
			fatPod(nonIndexed, 2, "", podState{phase: corev1.PodRunning, node: true}),
			fatPod(nonIndexed, 3, "", podState{phase: corev1.PodPending}),
			fatPod(nonIndexed, 4, "", podState{phase: corev1.PodPending, node: true}),
			fatPod(nonIndexed, 5, "", run),
			fatPod(nonIndexed, 6, "", podState{phase: corev1.PodSucceeded, node: true, mainExit: exit(0)}),
			fatPod(nonIndexed, 7, "", podState{phase: corev1.PodFailed, node: true, mainExit: exit(2)}),
			fatPod(nonIndexed, 8, "", podState{phase: corev1.PodRunning, node: true, orphan: true}),
			fatPod(nonIndexed, 9, "", podState{phase: corev1.PodRunning, node: true, released: true}),
		},
	}, {
		name: "suspended: every active pod is removed",
		job:  suspended,
		pods: []*corev1.Pod{fatPod(suspended, 0, "", run), fatPod(suspended, 1, "", podState{phase: corev1.PodPending}), fatPod(suspended, 2, "", podState{phase: corev1.PodRunning, node: true, restarts: 1})},
	}, {
		name: "indexed, replacement when Failed: terminating pods hold their index",
		job:  replaceFailed,
		pods: []*corev1.Pod{
			fatPod(replaceFailed, 0, "0", podState{phase: corev1.PodRunning, node: true, terminating: true}),
			fatPod(replaceFailed, 1, "1", podState{phase: corev1.PodFailed, node: true, mainExit: exit(1), terminating: true}),
			fatPod(replaceFailed, 2, "2", run),
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			trimmed := make([]*corev1.Pod, len(tc.pods))
			for i, p := range tc.pods {
				trimmed[i] = reconcile.TrimPod(p.DeepCopy())
			}
			compute := func(pods []*corev1.Pod) *plan.Plan {
				p, err := plan.Compute(plan.Input{Workload: plan.JobWorkload(tc.job.DeepCopy()), Pods: pods,
					ControllerName: batchv1.JobControllerName, ExpectationsSatisfied: true, Now: trimNow})
				if err != nil {
					t.Fatalf("Compute: %v", err)
				}
				return p
			}
			full, slim := compute(tc.pods), compute(trimmed)
			if diff := cmp.Diff(full, slim, samePods, cmpopts.EquateEmpty(), cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
				t.Errorf("the plan of the trimmed pods differs (-full +trimmed):\n%s", diff)
			}
			if len(full.Create)+len(full.Delete)+len(full.RemoveFinalizers)+len(full.Adopt)+len(full.Release) == 0 && !full.StatusChanged {
				t.Errorf("the case decides nothing, so it compares nothing: %+v", full)
			}
		})
	}
}

func TestTrimPodLeavesAShallowCopysOriginal(t *testing.T) {
	job := trimJob(batchv1.IndexedCompletion, 4, 4)
	pod := fatPod(job, 1, "1", podState{phase: corev1.PodFailed, node: true, mainExit: ptr.To[int32](3), restarts: 1})
	want := pod.DeepCopy()
	c := *pod
	got := reconcile.TrimPod(&c)
	if !equality.Semantic.DeepEqual(pod, want) {
		t.Errorf("trimming a shallow copy changed the original: %s", cmp.Diff(want, pod))
	}
	if got != &c || got.ManagedFields != nil || got.Spec.Volumes != nil || got.Spec.Containers[0].Image != "" ||
		got.Spec.Containers[0].Env != nil || got.Spec.Tolerations != nil || got.Status.PodIP != "" || got.Status.ContainerStatuses[0].Image != "" {
		t.Errorf("TrimPod kept what it drops: %+v", got)
	}
	if got.Spec.InitContainers[1].RestartPolicy == nil || got.Status.ContainerStatuses[0].State.Terminated.ExitCode != 3 ||
		got.Status.ContainerStatuses[0].LastTerminationState.Terminated == nil || got.Annotations[batchv1.JobCompletionIndexAnnotation] != "1" {
		t.Errorf("TrimPod dropped what the decisions read: %+v", got)
	}
	again := reconcile.TrimPod(got.DeepCopy())
	if !equality.Semantic.DeepEqual(again, got) {
		t.Errorf("trimming twice differs from once: %s", cmp.Diff(got, again))
	}
	if reconcile.TrimPod(nil) != nil {
		t.Error("TrimPod(nil) is not nil")
	}
}

func BenchmarkTrimPod(b *testing.B) {
	job := trimJob(batchv1.IndexedCompletion, 4, 4)
	pod := fatPod(job, 1, "1", podState{phase: corev1.PodRunning, ready: true, node: true})
	pods := make([]*corev1.Pod, 256)
	for i := range pods {
		pods[i] = pod.DeepCopy()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		p := *pods[i%len(pods)] // a shallow copy: TrimPod leaves the original whole
		reconcile.TrimPod(&p)
	}
}

// BenchmarkCachedPodHeap measures the heap N cached pods retain, as an informer
// holds them: each decoded on its own from the protobuf of a running pod of a
// defaulted Job (a decoder allocates every string anew), whole or trimmed by
// TrimPod as the transform does. It reports bytes per pod.
func BenchmarkCachedPodHeap(b *testing.B) {
	const n = 2000
	job := trimJob(batchv1.IndexedCompletion, n, n)
	tmpl := fatPod(job, 1, "1", podState{phase: corev1.PodRunning, ready: true, node: true})
	data, err := tmpl.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		trim bool
	}{{"full", false}, {"trimmed", true}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var perPod float64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				cache := make([]*corev1.Pod, n)
				for i := range cache {
					p := &corev1.Pod{}
					if err := p.Unmarshal(data); err != nil {
						b.Fatal(err)
					}
					if bc.trim {
						p = reconcile.TrimPod(p)
					}
					cache[i] = p
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				perPod = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n
				runtime.KeepAlive(cache)
			}
			b.ReportMetric(perPod, "B/pod")
		})
	}
}

// fieldsV1 is a managed-fields set of raw JSON, made through UnmarshalJSON: every
// apimachinery release from the core's floor on has it (the Raw field is deprecated
// from v0.37, its replacement missing at the floor).
func fieldsV1(raw string) *metav1.FieldsV1 {
	f := &metav1.FieldsV1{}
	if err := f.UnmarshalJSON([]byte(raw)); err != nil {
		panic(err)
	}
	return f
}

// Pods decoded one by one repeat their strings; TrimPod leaves one copy of each
// that pods share (a label key and value, the owner reference, a finalizer, a
// condition), and the pods' own strings (their names) their own.
func TestTrimPodSharesRepeatedStrings(t *testing.T) {
	job := trimJob(batchv1.IndexedCompletion, 4, 4)
	a := reconcile.TrimPod(fatPod(job, 1, "1", podState{phase: corev1.PodRunning, ready: true, node: true}).DeepCopy())
	b := reconcile.TrimPod(fatPod(job, 2, "2", podState{phase: corev1.PodRunning, ready: true, node: true}).DeepCopy())
	same := func(what, x, y string) {
		t.Helper()
		if x != y || unsafe.StringData(x) != unsafe.StringData(y) {
			t.Errorf("%s: %q and %q are not one shared copy", what, x, y)
		}
	}
	same("label value", a.Labels[batchv1.JobNameLabel], b.Labels[batchv1.JobNameLabel])
	for k := range a.Labels {
		for k2 := range b.Labels {
			if k == k2 {
				same("label key", k, k2)
			}
		}
	}
	same("namespace", a.Namespace, b.Namespace)
	same("owner UID", string(a.OwnerReferences[0].UID), string(b.OwnerReferences[0].UID))
	same("owner kind", a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind)
	same("finalizer", a.Finalizers[0], b.Finalizers[0])
	same("container name", a.Spec.Containers[0].Name, b.Spec.Containers[0].Name)
	same("condition type", string(a.Status.Conditions[0].Type), string(b.Status.Conditions[0].Type))
	same("condition status", string(a.Status.Conditions[0].Status), string(b.Status.Conditions[0].Status))
	if unsafe.StringData(a.Name) == unsafe.StringData(b.Name) {
		t.Error("the pods' names share a copy")
	}
}
