package kueue_test

import (
	"context"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	kueueapi "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/admissionchecks/multikueue"
	"sigs.k8s.io/kueue/pkg/controller/admissionchecks/multikueue/externalframeworks"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	"github.com/jobkit/jobkit/controllerruntime/testenv"
)

// kueueNamespace is where the manager cluster's MultiKueue reads the worker's
// kubeconfig Secret.
const kueueNamespace = "kueue-system"

// MultiKueue with a jobkit owner kind, as Kueue's multikueue integration
// tests run it: a manager cluster and a worker cluster (two API servers),
// each with Kueue's controllers and scheduler and jobkit's Task controller and
// integration; the manager also runs MultiKueue with Kueue's generic adapter
// for external kinds. A Task queued on the manager with managedBy
// kueue.x-k8s.io/multikueue is left alone there by jobkit's controller, runs
// on the worker (created by MultiKueue without managedBy, admitted through
// its prebuilt Workload, its pods run by the worker's jobkit controller), and
// its status comes back: Complete on the manager, with no pod there.
func TestMultiKueue(t *testing.T) {
	dir, err := testenv.Assets()
	if err != nil {
		t.Fatal(err)
	}
	crds, err := kueueCRDs()
	if err != nil {
		t.Fatal(err)
	}
	workerEnv := &envtest.Environment{BinaryAssetsDirectory: dir, CRDDirectoryPaths: []string{"testdata", crds}, ErrorIfCRDPathMissing: true,
		ControlPlaneStartTimeout: testenv.StartTimeout, ControlPlaneStopTimeout: testenv.StartTimeout,
		WebhookInstallOptions: envtest.WebhookInstallOptions{MutatingWebhooks: []*admissionregistrationv1.MutatingWebhookConfiguration{}}}
	workerCfg, err := workerEnv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = workerEnv.Stop() })
	const ns = "multikueue-test"
	worker := start(t, "2", func(o *options) { o.config, o.namespace = workerCfg, ns })

	gvk := taskKind.GroupVersionKind()
	withMultiKueue := func(ctx context.Context, mgr manager.Manager) error {
		if err := multikueue.SetupIndexer(ctx, mgr.GetFieldIndexer(), kueueNamespace); err != nil {
			return err
		}
		adapter := externalframeworks.NewAdapter(gvk)
		return multikueue.SetupControllers(mgr, kueueNamespace,
			multikueue.WithAdapters(map[string]jobframework.MultiKueueAdapter{gvk.String(): adapter}))
	}
	mgrCl := start(t, "2", func(o *options) { o.namespace, o.check, o.also = ns, "mk", withMultiKueue })
	mgrCl.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kueueNamespace}})
	mgrCl.create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: kueueNamespace, Name: "worker"},
		Data: map[string][]byte{"kubeconfig": workerEnv.KubeConfig}})
	mgrCl.create(t, &kueueapi.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: "worker"}, Spec: kueueapi.MultiKueueClusterSpec{
		ClusterSource: kueueapi.ClusterSource{KubeConfig: &kueueapi.KubeConfig{Location: "worker", LocationType: kueueapi.SecretLocationType}}}})
	mgrCl.create(t, &kueueapi.MultiKueueConfig{ObjectMeta: metav1.ObjectMeta{Name: "mk"},
		Spec: kueueapi.MultiKueueConfigSpec{Clusters: []string{"worker"}}})
	mgrCl.create(t, &kueueapi.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "mk"}, Spec: kueueapi.AdmissionCheckSpec{
		ControllerName: kueueapi.MultiKueueControllerName,
		Parameters:     &kueueapi.AdmissionCheckParametersReference{APIGroup: kueueapi.GroupVersion.Group, Kind: "MultiKueueConfig", Name: "mk"}}})

	task := mgrCl.task("remote", 2)
	task.Spec.ManagedBy = ptr.To(kueueapi.MultiKueueControllerName)
	mgrCl.create(t, task)
	eventually(t, "the Task created on the worker by MultiKueue, without managedBy, and running there", func() bool {
		var remote = worker.getOrNil(t, "remote")
		return remote != nil && remote.Spec.ManagedBy == nil && remote.Status.Active == 2
	})
	worker.kubelet.finish("remote")
	eventually(t, "the Task Complete on the manager, its status copied back", func() bool { return complete(mgrCl.get(t, "remote")) })
	if n := mgrCl.pods(t, "remote"); n != 0 {
		t.Errorf("the manager cluster has %d pods of the Task, want 0: jobkit's controller leaves MultiKueue's owners alone", n)
	}
	if got := mgrCl.get(t, "remote").Status.Succeeded; got != 2 {
		t.Errorf("the manager's Task succeeded = %d, want 2 (the worker's status)", got)
	}
}
