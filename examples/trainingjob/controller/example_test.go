package controller_test

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	jkcr "github.com/jobkit/jobkit/controllerruntime"
	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/examples/trainingjob/controller"
	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/reconcile"
)

// A TrainingJob of eight workers, four at a time, as jobkit syncs it: an Indexed
// Job of eight completions with retries counted per index and its own backoff.
func ExampleWorkload() {
	tj := &v1alpha1.TrainingJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "resnet"},
		Spec: v1alpha1.TrainingJobSpec{
			Workers:              8,
			Parallelism:          ptr.To[int32](4),
			BackoffLimitPerIndex: ptr.To[int32](3),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "trainer", Image: "trainer:1"}},
			}},
		},
	}
	w, err := controller.Workload(tj)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := w.Spec
	fmt.Println(*s.CompletionMode, *s.Completions, *s.Parallelism, *s.BackoffLimitPerIndex, *s.PodReplacementPolicy)
	fmt.Println("backoff:", w.Backoff.Base, "to", w.Backoff.Max)

	tj.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	_, err = controller.Workload(tj)
	fmt.Println(err)
	// Output:
	// Indexed 8 4 3 Failed
	// backoff: 10s to 6m0s
	// invalid TrainingJob ml/resnet: spec.template.spec.restartPolicy: "Always": must be Never (a container restarted in place would hide the exit codes the failure policy reads)
}

// A TrainingJob with a launcher and four workers, as jobkit syncs it: two roles
// under one owner, the launcher waiting for the workers to be Ready, the run
// complete when the launcher succeeds, a failed role restarting the group up to
// twice, and the status converted both ways.
func ExampleRolesWorkload() {
	pod := func(name string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: name, Image: name + ":1"}},
		}}
	}
	tj := &v1alpha1.TrainingJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "mnist"},
		Spec: v1alpha1.TrainingJobSpec{
			Workers:     4,
			Template:    pod("trainer"),
			Launcher:    &v1alpha1.Launcher{Template: pod("mpirun")},
			MaxRestarts: ptr.To[int32](2),
		},
	}
	w, err := controller.RolesWorkload(tj)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range w.Roles {
		fmt.Println(r.Name, *r.Spec.Completions, r.DependsOn)
	}
	fmt.Println("success:", w.SuccessPolicy.Operator, w.SuccessPolicy.TargetReplicatedJobs)
	fmt.Println("restarts:", w.FailurePolicy.MaxRestarts, w.FailurePolicy.Rules[0].Action, w.FailurePolicy.Rules[0].OnJobFailureReasons)

	w.Status.Restarts = 1
	w.Status.Roles = []ownedpods.RoleStatus{{Name: controller.RoleWorkers, Attempt: 1, Succeeded: 3}}
	st, err := controller.StatusFromRoles(w.Status)
	fmt.Println(st.Restarts, st.Workers.Attempt, st.Workers.Succeeded, st.Launcher == nil, err)

	_, err = controller.Workload(tj)
	fmt.Println(err)
	// Output:
	// workers 4 []
	// launcher 1 [{workers Ready}]
	// success: Any [launcher]
	// restarts: 2 FailJobSet [PodFailurePolicy DeadlineExceeded]
	// 1 1 3 true <nil>
	// invalid TrainingJob ml/mnist: spec.launcher: set: a run with a launcher is a workload of roles (RolesWorkload)
}

// Type gives the one Setup both shapes of a TrainingJob: Roles answers nil for a
// run without a launcher (Workload converts it, and Reconciler.Sync syncs it) and
// two roles for a run with one (Reconciler.SyncRoles syncs it).
func ExampleType() {
	pod := corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers:    []corev1.Container{{Name: "trainer", Image: "trainer:1"}},
	}}
	tj := &v1alpha1.TrainingJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "mnist"},
		Spec:       v1alpha1.TrainingJobSpec{Workers: 2, Template: pod},
	}
	g, err := controller.Type.Roles(tj)
	fmt.Println(g == nil, err)
	tj.Spec.Launcher = &v1alpha1.Launcher{Template: pod}
	g, err = controller.Type.Roles(tj)
	fmt.Println(len(g.Roles), g.Roles[0].Name, g.Roles[1].Name, err)
	err = controller.Type.SetRolesStatus(tj, ownedpods.Status{Restarts: 1, TerminalState: "Completed"})
	fmt.Println(tj.Status.Restarts, tj.Status.TerminalState, err)
	// Output:
	// true <nil>
	// 2 workers launcher <nil>
	// 1 Completed <nil>
}

// Setup registers the controller with a manager whose scheme knows TrainingJobs.
// It needs a cluster, so this example only compiles.
func ExampleSetup() {
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		panic(err)
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{Scheme: scheme})
	if err != nil {
		panic(err)
	}
	if _, err := controller.Setup(mgr, jkcr.Options[*v1alpha1.TrainingJob]{Config: reconcile.Config{Name: controller.DefaultManagedBy}}); err != nil {
		panic(err)
	}
	_ = mgr.Start(ctrl.SetupSignalHandler())
}
