package reconcile_test

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/owner"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// A training job of two workers and a launcher that waits for them to be ready,
// done when the launcher succeeds, run by SyncRoles on an in-memory cluster whose
// kubelet starts every pod and makes the launcher succeed.
func ExampleReconciler_SyncRoles() {
	ctx := context.Background()
	kind := owner.Kind{Group: "ml.example.com", Version: "v1", Kind: "TrainingJob", Finalizer: "ml.example.com/tracking"}
	const name = "ml.example.com/trainingjob-controller"
	c, owners := reconciletest.NewStore(reconciletest.Options{Owner: kind}, reconciletest.RunType)
	r, err := reconcile.New(reconcile.Config{Name: name, Owner: kind, Clock: c.Clock()}, c, c)
	if err != nil {
		fmt.Println(err)
		return
	}
	role := func(n int32) plan.Spec {
		return plan.Spec{
			Completions: ptr.To(n), Parallelism: ptr.To(n), CompletionMode: ptr.To(batchv1.IndexedCompletion),
			Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "main", Image: "trainer"}},
			}},
		}
	}
	_, err = owners.Create(runOf(&ownedpods.Workload{
		Namespace: "default", Name: "train", ManagedBy: ptr.To(name),
		Roles: []ownedpods.Role{
			{Name: "worker", Spec: role(2)},
			{Name: "launcher", Spec: role(1), DependsOn: []plaingroup.Dependency{{Name: "worker", Status: plaingroup.DependsOnReady}}},
		},
		SuccessPolicy: &plaingroup.SuccessPolicy{Operator: plaingroup.Any, TargetReplicatedJobs: []string{"launcher"}},
	}))
	if err != nil {
		fmt.Println(err)
		return
	}
	// Pods start ready; only the launcher finishes.
	c.Kubelet().SetScript(func(k *reconciletest.Kubelet, p *corev1.Pod) error {
		switch {
		case p.DeletionTimestamp != nil:
			return nil
		case p.Status.Phase == corev1.PodPending:
			if err := k.Run(p.Namespace, p.Name); err != nil {
				return err
			}
			return k.SetReady(p.Namespace, p.Name, true)
		case p.Status.Phase == corev1.PodRunning && p.Labels[plaingroup.LabelRoleName] == "launcher":
			return k.Succeed(p.Namespace, p.Name)
		}
		return nil
	})

	d := reconciletest.NewDriver(c, r)
	d.SyncFunc, d.DoneFunc = owners.SyncFunc(r), owners.DoneFunc()
	most := 0
	d.OnStep = func(sr reconciletest.StepResult) { most = max(most, sr.Result.StatusWrites) }
	if _, err := d.Run(ctx, "default", "train", 50); err != nil {
		fmt.Println(err)
		return
	}
	w, _ := owners.Get("default", "train")
	fmt.Println("terminal state:", w.Status.TerminalState)
	for _, rs := range w.Status.Roles {
		fmt.Printf("%s: succeeded %d, failed %d\n", rs.Name, rs.Succeeded, rs.Failed)
	}
	fmt.Println("status writes per sync at most:", most)
	// Output:
	// terminal state: Completed
	// worker: succeeded 0, failed 0
	// launcher: succeeded 1, failed 0
	// status writes per sync at most: 1
}
