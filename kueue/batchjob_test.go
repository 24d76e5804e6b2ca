package kueue_test

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	kueueapi "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/controller/constants"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	kueuejob "sigs.k8s.io/kueue/pkg/controller/jobs/job"

	jkcr "github.com/jobkit/jobkit/controllerruntime"
	"github.com/jobkit/jobkit/reconcile"
)

// jobControllerName is the spec.managedBy of the batch/v1 Jobs jobkit's Job
// controller runs in these tests.
const jobControllerName = "test.jobkit.dev/job-controller"

// setupBatchJobs adds to mgr Kueue's built-in integration of batch/v1 Jobs,
// unchanged, and jobkit's Job controller.
func setupBatchJobs(ctx context.Context, t *testing.T, mgr manager.Manager, cache *schdcache.Cache) {
	t.Helper()
	//lint:ignore SA1019 Kueue's reconciler records through the core/v1 recorder.
	rec := mgr.GetEventRecorderFor("kueue-job-controller")
	r, err := kueuejob.NewReconciler(ctx, mgr.GetClient(), mgr.GetFieldIndexer(), rec, jobframework.WithCache(cache))
	if err != nil {
		t.Fatal(err)
	}
	if err := kueuejob.SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		t.Fatal(err)
	}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	if _, err := jkcr.Setup(mgr, jkcr.Options[*batchv1.Job]{Type: reconcile.JobType,
		Config: reconcile.Config{Name: jobControllerName}, SkipNameValidation: true}); err != nil {
		t.Fatal(err)
	}
}

// A batch/v1 Job whose spec.managedBy names jobkit's Job controller is queued by
// Kueue's built-in Job integration unchanged: it waits suspended, is admitted,
// runs under jobkit's controller with the flavour's node selector, completes,
// and its quota is released.
func TestBatchJobUnderJobkit(t *testing.T) {
	cl := start(t, "2", func(o *options) { o.batchJobs = true })
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: cl.namespace, Name: "job", Labels: map[string]string{constants.QueueLabel: "lq"}},
		Spec: batchv1.JobSpec{
			Parallelism: ptr.To[int32](2), Completions: ptr.To[int32](2), Suspend: ptr.To(true), ManagedBy: ptr.To(jobControllerName),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "main", Image: "busybox", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}},
		},
	}
	cl.create(t, job)
	read := func() *batchv1.Job {
		var j batchv1.Job
		if err := cl.c.Get(context.Background(), client.ObjectKeyFromObject(job), &j); err != nil {
			t.Fatal(err)
		}
		return &j
	}
	eventually(t, "the Job admitted and running two pods", func() bool {
		var wls kueueapi.WorkloadList
		if err := cl.c.List(context.Background(), &wls, client.InNamespace(cl.namespace)); err != nil || len(wls.Items) != 1 {
			return false
		}
		return conditionTrue(&wls.Items[0], kueueapi.WorkloadAdmitted) && len(cl.kubelet.selectors("job")) == 2
	})
	for _, sel := range cl.kubelet.selectors("job") {
		if sel["pool"] != cl.cq {
			t.Fatalf("a pod of the Job started with node selector %v, want pool=%s", sel, cl.cq)
		}
	}
	cl.kubelet.finish("job")
	eventually(t, "the Job Complete, counted by jobkit", func() bool {
		j := read()
		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return j.Status.Succeeded == 2
			}
		}
		return false
	})
	eventually(t, "the ClusterQueue's reservation released", func() bool { return cl.usage(t) == 0 })
}
