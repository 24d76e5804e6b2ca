package ownedpods_test

import (
	"fmt"
	"math"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/owner"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
)

// A TrainingJob of two workers and a launcher that waits for them to be ready
// and whose success completes the run. The first sync creates the workers
// only, each with its role and attempt in labels and the environment.
func ExampleCompute() {
	tmpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers:    []corev1.Container{{Name: "main", Image: "trainer:v1"}},
	}}
	w := &ownedpods.Workload{
		Namespace: "ml", Name: "mnist", UID: "7c9e6679",
		Roles: []ownedpods.Role{
			{Name: "worker", Spec: plan.Spec{
				Template: tmpl, Completions: ptr.To[int32](2), Parallelism: ptr.To[int32](2),
				CompletionMode: ptr.To(batchv1.IndexedCompletion),
			}},
			{Name: "launcher", Spec: plan.Spec{Template: tmpl},
				DependsOn: []plaingroup.Dependency{{Name: "worker", Status: plaingroup.DependsOnReady}}},
		},
		SuccessPolicy: &plaingroup.SuccessPolicy{Operator: plaingroup.Any, TargetReplicatedJobs: []string{"launcher"}},
		FailurePolicy: &plaingroup.FailurePolicy{MaxRestarts: 3},
	}
	p, err := ownedpods.Compute(ownedpods.Input{
		Workload:              w,
		ControllerName:        "ml.example.com/trainingjob-controller",
		ExpectationsSatisfied: true,
		Now:                   time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC),
		Owner: owner.Kind{Group: "ml.example.com", Version: "v1", Kind: "TrainingJob",
			Finalizer: "ml.example.com/tracking", KeyPrefix: "ml.example.com/"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range p.Create {
		pod := c.Pod
		fmt.Printf("create %s (hostname %s): role %s, attempt %s, env %s=%s\n", pod.Name, pod.Spec.Hostname,
			pod.Labels[plaingroup.LabelRoleName], pod.Labels[plaingroup.LabelRestartAttempt],
			pod.Spec.Containers[0].Env[0].Name, pod.Spec.Containers[0].Env[0].Value)
	}
	for _, r := range p.Status.Roles {
		fmt.Printf("status %s: attempt %d, active %d\n", r.Name, r.Attempt, r.Job.Active)
	}
	// Output:
	// create mnist-worker-0-qd9pl (hostname mnist-worker-0): role worker, attempt 0, env JOBKIT_ROLE=worker
	// create mnist-worker-1-bwx2t (hostname mnist-worker-1): role worker, attempt 0, env JOBKIT_ROLE=worker
	// status worker: attempt 0, active 2
	// status launcher: attempt 0, active 0
}

// The restart protocol: the group was restarted (status.restarts 1) and
// nothing of attempt 0 is left, so this sync starts attempt 1 in the status
// alone; the next sync, from that status, creates the pods of attempt 1.
func ExampleCompute_restart() {
	tmpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers:    []corev1.Container{{Name: "main", Image: "trainer:v1"}},
	}}
	w := &ownedpods.Workload{
		Namespace: "ml", Name: "mnist", UID: "7c9e6679",
		Roles: []ownedpods.Role{{Name: "worker", Spec: plan.Spec{
			Template: tmpl, Completions: ptr.To[int32](2), Parallelism: ptr.To[int32](2),
			CompletionMode: ptr.To(batchv1.IndexedCompletion),
		}}},
		FailurePolicy: &plaingroup.FailurePolicy{MaxRestarts: 3},
		Status: ownedpods.Status{Restarts: 1, RestartsCountTowardsMax: 1, Roles: []ownedpods.RoleStatus{
			{Name: "worker", Attempt: 0, Failed: 2, Job: batchv1.JobStatus{Failed: 2}},
		}},
	}
	in := ownedpods.Input{
		Workload:              w,
		ControllerName:        "ml.example.com/trainingjob-controller",
		ExpectationsSatisfied: true,
		Now:                   time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC),
		Owner: owner.Kind{Group: "ml.example.com", Version: "v1", Kind: "TrainingJob",
			Finalizer: "ml.example.com/tracking", KeyPrefix: "ml.example.com/"},
	}
	for sync := 1; sync <= 2; sync++ {
		p, err := ownedpods.Compute(in)
		if err != nil {
			fmt.Println(err)
			return
		}
		r := p.Status.Roles[0]
		fmt.Printf("sync %d: worker attempt %d, failed %d over attempts, %d in this one; %d pods to create\n",
			sync, r.Attempt, r.Failed, r.Job.Failed, len(p.Create))
		for _, c := range p.Create {
			fmt.Printf("  %s, attempt %s\n", c.Pod.Name, c.Pod.Labels[plaingroup.LabelRestartAttempt])
		}
		w.Status = p.Status // written
	}
	// Output:
	// sync 1: worker attempt 1, failed 2 over attempts, 0 in this one; 0 pods to create
	// sync 2: worker attempt 1, failed 2 over attempts, 0 in this one; 2 pods to create
	//   mnist-worker-0-qd9pl, attempt 1
	//   mnist-worker-1-bwx2t, attempt 1
}

// A group restarted in place: its two workers' agents report the attempt
// they are on. While one reports the next attempt, the group's previous
// attempt becomes the one the other must leave (its agent restarts its pod's
// containers); once both report it, the current attempt moves and the
// barrier lifts. No pod is created or deleted for it.
func ExampleCompute_inPlaceRestart() {
	tmpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyOnFailure,
		Containers:    []corev1.Container{{Name: "main", Image: "trainer:v1"}},
	}}
	w := &ownedpods.Workload{
		Namespace: "ml", Name: "mnist", UID: "7c9e6679",
		Roles: []ownedpods.Role{{Name: "worker", Spec: plan.Spec{
			Template: tmpl, Completions: ptr.To[int32](2), Parallelism: ptr.To[int32](2),
			CompletionMode: ptr.To(batchv1.IndexedCompletion), BackoffLimit: ptr.To[int32](math.MaxInt32),
			PodReplacementPolicy: ptr.To(batchv1.Failed),
		}}},
		FailurePolicy: &plaingroup.FailurePolicy{MaxRestarts: 3, RestartStrategy: plaingroup.InPlaceRestart},
		Status: ownedpods.Status{Roles: []ownedpods.RoleStatus{{Name: "worker"}},
			InPlace: plaingroup.InPlaceAttempts{Current: ptr.To[int32](0)}},
	}
	kind := owner.Kind{Group: "ml.example.com", Version: "v1", Kind: "TrainingJob",
		Finalizer: "ml.example.com/tracking", KeyPrefix: "ml.example.com/"}
	pod := func(index int, attempt string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: fmt.Sprintf("mnist-worker-%d", index), UID: types.UID(fmt.Sprint("uid-", index)),
				Labels:          map[string]string{plaingroup.LabelRoleName: "worker", plaingroup.LabelRestartAttempt: "0"},
				Annotations:     map[string]string{plaingroup.AnnotationInPlaceRestartAttempt: attempt, kind.IndexKey(): fmt.Sprint(index)},
				Finalizers:      []string{kind.Finalizer},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "ml.example.com/v1", Kind: "TrainingJob", Name: "mnist", UID: "7c9e6679", Controller: ptr.To(true)}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		}
	}
	show := func(a plaingroup.InPlaceAttempts) string {
		s := func(p *int32) string {
			if p == nil {
				return "unset"
			}
			return fmt.Sprint(*p)
		}
		return "previous " + s(a.Previous) + ", current " + s(a.Current)
	}
	for _, reports := range [][2]string{{"0", "1"}, {"1", "1"}} {
		p, err := ownedpods.Compute(ownedpods.Input{
			Workload: w, Pods: []*corev1.Pod{pod(0, reports[0]), pod(1, reports[1])},
			ControllerName: "ml.example.com/trainingjob-controller", ExpectationsSatisfied: true,
			Now: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), Owner: kind,
		})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("pods report %s: %s; %d created, %d deleted\n", reports, show(p.Status.InPlace), len(p.Create), len(p.Delete))
		w.Status = p.Status // written
	}
	// Output:
	// pods report [0 1]: previous 0, current 0; 0 created, 0 deleted
	// pods report [1 1]: previous 0, current 1; 0 created, 0 deleted
}
