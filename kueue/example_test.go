package kueue_test

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	"sigs.k8s.io/kueue/pkg/podset"

	"github.com/jobkit/jobkit/kueue"
	"github.com/jobkit/jobkit/reconcile"
)

// NewJob shows an owner as Kueue's framework sees it: one pod set of the pods
// it runs at once, started with the flavour's node selector merged into its
// template.
func ExampleNewJob() {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "train"}, Spec: batchv1.JobSpec{
		Parallelism: ptr.To[int32](4), Completions: ptr.To[int32](8), Suspend: ptr.To(true),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}}},
	}}
	j := kueue.NewJob(&reconcile.JobType, batchv1.SchemeGroupVersion.WithKind("Job"), job)
	sets, _ := j.PodSets(context.Background())
	fmt.Println(sets[0].Name, sets[0].Count, j.IsSuspended())
	info := podset.PodSetInfo{Name: sets[0].Name, Count: 4, NodeSelector: map[string]string{"pool": "a100"}}
	if err := j.RunWithPodSetsInfo(context.Background(), []podset.PodSetInfo{info}); err != nil {
		fmt.Println(err)
	}
	fmt.Println(job.Spec.Template.Spec.NodeSelector, j.IsSuspended())
	// Output:
	// main 4 true
	// map[pool:a100] false
}

// Setup beside controllerruntime.Setup, with the same Type: the owners of the
// kind wait for Kueue's admission. It needs a cluster that runs Kueue, whose
// Configuration lists the kind in integrations.externalFrameworks; the same
// Configuration (here waitForPodsReady) sets the integration's options. The kind here is
// reconcile.JobType's for brevity; an operator passes its own kind's Type
// (batch/v1 Jobs are queued by Kueue's built-in integration: docs/kueue.md).
func ExampleSetup() {
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{})
	if err != nil {
		panic(err)
	}
	// controllerruntime.Setup(mgr, controllerruntime.Options[*batchv1.Job]{Type: reconcile.JobType, ...}) runs the pods.
	opts := kueue.Options{Configuration: &configapi.Configuration{
		WaitForPodsReady: &configapi.WaitForPodsReady{Timeout: metav1.Duration{Duration: 5 * time.Minute}},
	}}
	if err := kueue.Setup(context.Background(), mgr, reconcile.JobType, opts); err != nil {
		panic(err)
	}
}
