package plan_test

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
)

var exampleNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// exampleJob is a Job as the API server stores it: defaulted, with the labels it adds
// to the template and the selector it generates.
func exampleJob(mode batchv1.CompletionMode, completions, parallelism int32) *batchv1.Job {
	labels := map[string]string{
		batchv1.JobNameLabel: "pi", batchv1.ControllerUidLabel: "uid-1",
		"job-name": "pi", "controller-uid": "uid-1",
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "default", UID: "uid-1"},
		Spec: batchv1.JobSpec{
			Completions:    ptr.To(completions),
			Parallelism:    ptr.To(parallelism),
			CompletionMode: ptr.To(mode),
			BackoffLimit:   ptr.To[int32](6),
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{batchv1.ControllerUidLabel: "uid-1"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "pi", Image: "perl"}},
				},
			},
		},
	}
}

// examplePod is a pod of exampleJob that carries the tracking finalizer.
func examplePod(job *batchv1.Job, name string, phase corev1.PodPhase, index string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: job.Namespace, UID: types.UID(name),
			Labels:            job.Spec.Template.Labels,
			Finalizers:        []string{batchv1.JobTrackingFinalizer},
			OwnerReferences:   []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))},
			CreationTimestamp: metav1.NewTime(exampleNow.Add(-time.Hour)),
		},
		Status: corev1.PodStatus{Phase: phase},
	}
	if index != "" {
		pod.Annotations = map[string]string{batchv1.JobCompletionIndexAnnotation: index}
	}
	return pod
}

func ExampleCompute() {
	job := exampleJob(batchv1.NonIndexedCompletion, 3, 2)
	p, err := plan.Compute(plan.Input{
		Workload:              plan.JobWorkload(job),
		ControllerName:        batchv1.JobControllerName, // the Job has no spec.managedBy
		ExpectationsSatisfied: true,
		Now:                   exampleNow,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The first sync starts the Job and creates as many pods as parallelism allows.
	for _, c := range p.Create {
		fmt.Println("create", c.Pod.GenerateName, c.Pod.Finalizers, "owner", c.Pod.OwnerReferences[0].Kind, c.Pod.OwnerReferences[0].Name)
	}
	fmt.Println("active", p.Status.Active, "started", p.Status.StartTime.UTC().Format(time.RFC3339), "write status", p.StatusChanged)
	// Output:
	// create pi- [batch.kubernetes.io/job-tracking] owner Job pi
	// create pi- [batch.kubernetes.io/job-tracking] owner Job pi
	// active 2 started 2026-03-01T12:00:00Z write status true
}

func ExampleCompute_indexed() {
	job := exampleJob(batchv1.IndexedCompletion, 4, 2)
	job.Status.StartTime = ptr.To(metav1.NewTime(exampleNow.Add(-time.Hour)))
	pods := []*corev1.Pod{
		examplePod(job, "pi-0", corev1.PodSucceeded, "0"),
		examplePod(job, "pi-1", corev1.PodRunning, "1"),
	}
	p, err := plan.Compute(plan.Input{Workload: plan.JobWorkload(job), Pods: pods, ControllerName: batchv1.JobControllerName, ExpectationsSatisfied: true, Now: exampleNow})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Index 0 is recorded in completedIndexes before its pod loses the finalizer...
	fmt.Printf("record completedIndexes=%q\n", p.RecordStatus.CompletedIndexes)
	for _, a := range p.RemoveFinalizers {
		fmt.Println("remove finalizer", a.Pod.Name, "-", a.Reason)
	}
	// ...and the next pending index takes the free slot.
	for _, c := range p.Create {
		fmt.Println("create index", c.Index, c.Pod.GenerateName, "hostname", c.Pod.Spec.Hostname)
	}
	// Output:
	// record completedIndexes="0"
	// remove finalizer pi-0 - pod succeeded
	// create index 2 pi-2- hostname pi-2
}

func ExamplePlan_Settle() {
	job := exampleJob(batchv1.NonIndexedCompletion, 2, 2)
	job.Status.StartTime = ptr.To(metav1.NewTime(exampleNow.Add(-time.Hour)))
	pods := []*corev1.Pod{
		examplePod(job, "a", corev1.PodSucceeded, ""),
		examplePod(job, "b", corev1.PodSucceeded, ""),
	}
	p, err := plan.Compute(plan.Input{Workload: plan.JobWorkload(job), Pods: pods, ControllerName: batchv1.JobControllerName, ExpectationsSatisfied: true, Now: exampleNow})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Step 2: the caller writes RecordStatus, which lists both pods as uncounted.
	fmt.Println("recorded", p.RecordStatus.UncountedTerminatedPods.Succeeded)

	// Step 3: removing the finalizer of b fails; only a is counted, and the Job
	// cannot complete while b is uncounted.
	s := p.Settle(sets.New[types.UID]("a"))
	fmt.Println("succeeded", s.Status.Succeeded, "uncounted", s.Status.UncountedTerminatedPods.Succeeded, "finished", s.Finished != nil, "write", s.Changed)

	// When both removals succeed, the Job completes.
	s = p.Settle(sets.New[types.UID]("a", "b"))
	fmt.Println("succeeded", s.Status.Succeeded, "finished", s.Finished.Type, s.Finished.Reason, "at", s.Status.CompletionTime.UTC().Format(time.Kitchen))
	// Output:
	// recorded [a b]
	// succeeded 1 uncounted [b] finished false write true
	// succeeded 2 finished Complete CompletionsReached at 12:00PM
}

func ExamplePlan_String() {
	job := exampleJob(batchv1.NonIndexedCompletion, 3, 2)
	job.Spec.BackoffLimit = ptr.To[int32](0)
	job.Status.StartTime = ptr.To(metav1.NewTime(exampleNow.Add(-time.Hour)))
	pods := []*corev1.Pod{
		examplePod(job, "a", corev1.PodFailed, ""),
		examplePod(job, "b", corev1.PodRunning, ""),
	}
	p, err := plan.Compute(plan.Input{Workload: plan.JobWorkload(job), Pods: pods, ControllerName: batchv1.JobControllerName, ExpectationsSatisfied: true, Now: exampleNow})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p)
	// Output:
	// status: active=0 ready=0 terminating=1 succeeded=0 failed=2 (changed)
	// record first: uncounted succeeded=0 failed=2
	// remove finalizer 2: a (pod failed), b (job finishing: BackoffLimitExceeded)
	// delete 1: b (job finishing: BackoffLimitExceeded)
	// condition FailureTarget=True BackoffLimitExceeded: Job has reached the specified backoff limit
}

// The number of pods a Job of 10 completions and parallelism 4 wants running after 8
// successes, and that of a Job whose spec passed through no API defaulting.
func ExampleSpec_WantActive() {
	s := plan.Spec{Completions: ptr.To[int32](10), Parallelism: ptr.To[int32](4)}
	fmt.Println(s.WantActive(8, 4))
	var undefaulted plan.Spec
	fmt.Println(undefaulted.WantActive(0, 0))
	// Output:
	// 2
	// 1
}

// The succeeded and failed indexes of an Indexed Job and its pods, on their own:
// what status.completedIndexes would hold once the finished pods are counted.
func ExampleWorkload_IndexOutcomes() {
	job := exampleJob(batchv1.IndexedCompletion, 5, 2)
	job.Status.CompletedIndexes = "0,1"
	pods := []*corev1.Pod{
		examplePod(job, "pi-2", corev1.PodSucceeded, "2"),
		examplePod(job, "pi-3", corev1.PodRunning, "3"),
	}
	out, warnings, err := plan.JobWorkload(job).IndexOutcomes(owner.BatchJob, pods)
	if err != nil {
		panic(err)
	}
	fmt.Println("succeeded:", out.Succeeded, "failed:", out.Failed, "warnings:", len(warnings))
	// Output:
	// succeeded: 0-2 failed:  warnings: 0
}

// How large the status of an Indexed Job can grow, against the largest object the
// API server stores: 100,000 completions fit, 1,000,000 under backoffLimitPerIndex
// do not (Compute would fail such a Job with reason StatusTooLarge once its status
// stopped fitting, rather than have every write refused).
func ExampleSpec_WorstStatusSize() {
	for _, c := range []int32{100_000, 1_000_000} {
		spec := plan.Spec{
			Completions: ptr.To(c), Parallelism: ptr.To[int32](100),
			CompletionMode: ptr.To(batchv1.IndexedCompletion), BackoffLimitPerIndex: ptr.To[int32](1),
		}
		size := spec.WorstStatusSize(plan.Options{})
		fmt.Printf("%d completions: %d KiB, fits: %v\n", c, size>>10, size < plan.MaxObjectBytes)
	}
	// Output:
	// 100000 completions: 597 KiB, fits: true
	// 1000000 completions: 6749 KiB, fits: false
}

// A controller that lists pods from an informer's cache keeps one FactCache per
// owner: each sync reads only the pods that are new objects since the last one.
// A pod that changes is stored as a new object, never changed in place.
func ExampleFactCache() {
	job := exampleJob(batchv1.NonIndexedCompletion, 2, 2)
	pods := []*corev1.Pod{
		examplePod(job, "pi-a", corev1.PodRunning, ""),
		examplePod(job, "pi-b", corev1.PodRunning, ""),
	}
	facts := new(plan.FactCache) // one per owner, kept between its syncs
	sync := func() {
		p, err := plan.Compute(plan.Input{
			Workload: plan.JobWorkload(job), Pods: pods, Facts: facts,
			ControllerName: batchv1.JobControllerName, ExpectationsSatisfied: true, Now: exampleNow,
		})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("active %d, succeeded %d\n", p.Status.Active, p.Status.Succeeded)
	}
	sync()
	// The informer stores pi-a's next version as a new object.
	done := pods[0].DeepCopy()
	done.Status.Phase = corev1.PodSucceeded
	pods = []*corev1.Pod{done, pods[1]}
	sync() // reads pi-a's new version; pi-b's facts are remembered
	// Output:
	// active 2, succeeded 0
	// active 1, succeeded 1
}
