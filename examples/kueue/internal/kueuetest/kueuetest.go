package kueuetest

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueueapi "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	kueueconstants "sigs.k8s.io/kueue/pkg/constants"
	"sigs.k8s.io/kueue/pkg/controller/core"
	"sigs.k8s.io/kueue/pkg/controller/core/indexer"
	"sigs.k8s.io/kueue/pkg/scheduler"
	preemptexpectations "sigs.k8s.io/kueue/pkg/scheduler/preemption/expectations"
)

// CRDs returns the directory of Kueue's CRDs in the module cache (v1beta2
// stored, no conversion webhook), for envtest to install.
func CRDs() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kueue").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m sigs.k8s.io/kueue: %w", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "config", "components", "crd", "bases"), nil
}

// Run starts Kueue's core controllers, its queue and scheduler caches and its
// scheduler in a manager on cfg, with Kueue's default Configuration, until
// ctx ends; errors from the running manager go to done.
func Run(ctx context.Context, cfg *rest.Config, done chan<- error) error {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, kueueapi.AddToScheme, configapi.AddToScheme} {
		if err := add(s); err != nil {
			return err
		}
	}
	mgr, err := manager.New(cfg, manager.Options{Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: crconfig.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		return err
	}
	kcfg := &configapi.Configuration{}
	s.Default(kcfg)
	cache := schdcache.New(mgr.GetClient())
	requeuer := qcache.NewRequeuer()
	expect := preemptexpectations.New()
	queues := qcache.NewManager(mgr.GetClient(), cache, requeuer, qcache.WithPreemptionExpectations(expect))
	if err := mgr.Add(requeuer); err != nil {
		return err
	}
	if err := indexer.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	if name, err := core.SetupControllers(mgr, queues, cache, kcfg, nil, expect, nil); err != nil {
		return fmt.Errorf("starting Kueue's controller %s: %w", name, err)
	}
	//lint:ignore SA1019 Kueue's scheduler records through the core/v1 recorder.
	rec := mgr.GetEventRecorderFor(kueueconstants.AdmissionName)
	if err := mgr.Add(scheduler.New(queues, cache, mgr.GetClient(), rec, scheduler.WithPreemptionExpectations(expect))); err != nil {
		return err
	}
	go func() { done <- mgr.Start(ctx) }()
	return nil
}

// Queues creates, for the owners of namespace, a ResourceFlavor name whose
// nodes are labelled pool=name, a ClusterQueue name of cpu CPUs of it, and a
// LocalQueue "lq" of that ClusterQueue in namespace.
func Queues(ctx context.Context, c client.Client, namespace, name, cpu string) error {
	objs := []client.Object{
		&kueueapi.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueueapi.ResourceFlavorSpec{NodeLabels: map[string]string{"pool": name}}},
		&kueueapi.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueueapi.ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: namespace}},
			ResourceGroups: []kueueapi.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
				Flavors: []kueueapi.FlavorQuotas{{Name: kueueapi.ResourceFlavorReference(name),
					Resources: []kueueapi.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse(cpu)}}}}}},
		}},
		&kueueapi.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "lq"},
			Spec: kueueapi.LocalQueueSpec{ClusterQueue: kueueapi.ClusterQueueReference(name)}},
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
		}
	}
	return nil
}

// Admitted reports whether the Workload Kueue made for the owner of kind and
// name in namespace is admitted, and returns its pod sets as name=count.
func Admitted(ctx context.Context, c client.Client, namespace, kind, name string) (bool, []string, error) {
	var wls kueueapi.WorkloadList
	if err := c.List(ctx, &wls, client.InNamespace(namespace)); err != nil {
		return false, nil, err
	}
	for i := range wls.Items {
		wl := &wls.Items[i]
		for _, ref := range wl.OwnerReferences {
			if ref.Kind != kind || ref.Name != name {
				continue
			}
			var sets []string
			for _, ps := range wl.Spec.PodSets {
				sets = append(sets, fmt.Sprintf("%s=%d", ps.Name, ps.Count))
			}
			for _, c := range wl.Status.Conditions {
				if c.Type == kueueapi.WorkloadAdmitted && c.Status == metav1.ConditionTrue {
					return true, sets, nil
				}
			}
			return false, sets, nil
		}
	}
	return false, nil, nil
}
