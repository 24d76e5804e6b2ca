package kueue

import (
	"context"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueueapi "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/metrics"

	"github.com/jobkit/jobkit/reconcile"
)

// Options configure Setup. The zero value is usable: the owners that carry
// Kueue's queue-name label (kueue.x-k8s.io/queue-name) are queued, no webhook.
type Options struct {
	// Configuration, when set, is the Kueue Configuration the cluster's Kueue
	// runs with (the file its manager reads), defaulted as Kueue defaults it:
	// its manageJobsWithoutQueueName, managedJobsNamespaceSelector,
	// waitForPodsReady, integrations.labelKeysToCopy and
	// objectRetentionPolicies become the options of Kueue's job reconciler, so
	// that it treats the kind's owners as Kueue's manager treats its own kinds.
	Configuration *configapi.Configuration
	// Kueue are further options of Kueue's job reconciler, applied after those
	// of Configuration (the later of two settings wins): for example
	// jobframework.WithWaitForPodsReady, WithManageJobsWithoutQueueName,
	// WithManagedJobsNamespaceSelector, WithLabelKeysToCopy.
	Kueue []jobframework.Option
	// Webhook registers a defaulting webhook for the owner kind on mgr's
	// webhook server (path /mutate-<group, dots as dashes>-<version>-<kind in
	// lower case>): an owner created with a queue name (or, under
	// WithManageJobsWithoutQueueName, in a managed namespace) is stored
	// suspended, so that no pod starts before admission, as Kueue's webhooks
	// do for its built-in kinds. The cluster needs a
	// MutatingWebhookConfiguration that sends the kind's creations there.
	// Kueue's validation of queue names and priority-class labels is not
	// offered. Without it, create queued owners with spec.suspend true: an
	// unsuspended one runs until Kueue's reconciler first sees it and
	// suspends it.
	Webhook bool
	// ControllerName is the name of jobkit's controller for the kind (the
	// reconcile.Config.Name given to controllerruntime.Setup). An owner whose
	// spec.managedBy is unset or names it may be handed to MultiKueue: with
	// Webhook and Type.SetManagedBy, a queued owner created in a LocalQueue
	// whose ClusterQueue has a MultiKueue admission check is stored with
	// spec.managedBy kueue.x-k8s.io/multikueue (Job.CanDefaultManagedBy).
	ControllerName string
}

// Setup makes the owners of kind T Kueue-managed in mgr, from typ, the same
// reconcile.Type that controllerruntime.Setup takes: it registers Kueue's
// generic job reconciler for T (a controller named "kueue-" and the kind in
// lower case, owning the Workloads it creates), the Workload index by owner it
// reads, Kueue's API in mgr's scheme and, with opts.Webhook, a defaulting
// webhook that stores queued owners suspended.
// Kueue's reconciler creates a Workload per queued owner with the owner's pod
// sets (Job), suspends an owner that is not admitted, unsuspends an admitted
// one with the flavour's scheduling directives in its templates, suspends it
// again and restores its templates when it is evicted or preempted, and marks
// the Workload finished (releasing its quota) when the owner finishes.
// jobkit's controller for T (controllerruntime.Setup) runs the pods as the
// owner's spec.suspend says; Kueue's own manager, where the kind is listed in
// integrations.externalFrameworks, admits the Workloads.
//
// typ must have SetSuspend; a Type with ChildJobs (groups of child Jobs) must
// have ChildJobTemplates, where the flavour is merged, or is refused with
// ErrUnsupported. mgr's scheme must know T.
func Setup[T client.Object](ctx context.Context, mgr manager.Manager, typ reconcile.Type[T], opts Options) error {
	if err := typ.Validate(); err != nil {
		return fmt.Errorf("kueue.Setup: %w", err)
	}
	if typ.SetSuspend == nil {
		return errors.New("kueue.Setup: Type.SetSuspend is not set: Kueue suspends and resumes owners through it")
	}
	if typ.ChildJobs != nil && typ.ChildJobTemplates == nil {
		return fmt.Errorf("kueue.Setup: %w: Type.ChildJobs is set and Type.ChildJobTemplates is not: a group's flavour goes into its roles' templates", ErrUnsupported)
	}
	if mgr == nil {
		return errors.New("kueue.Setup: the manager is nil")
	}
	kopts, err := configOptions(opts.Configuration)
	if err != nil {
		return fmt.Errorf("kueue.Setup: %w", err)
	}
	// Kueue's reconciler reads its scheduler cache when a Workload's pods
	// become ready under waitForPodsReady (for LocalQueue metrics); outside
	// Kueue's manager there is none, so it gets an empty one with those
	// metrics off (Options.Kueue may pass another: the later one wins).
	noMetrics := schdcache.WithLocalQueueMetrics(&metrics.LocalQueueMetricsConfig{})
	kopts = append([]jobframework.Option{jobframework.WithCache(schdcache.New(mgr.GetClient(), noMetrics))}, kopts...)
	kopts = append(kopts, opts.Kueue...)
	if err := kueueapi.AddToScheme(mgr.GetScheme()); err != nil {
		return fmt.Errorf("kueue.Setup: adding Kueue's API to the scheme: %w", err)
	}
	gvk, err := apiutil.GVKForObject(typ.New(), mgr.GetScheme())
	if err != nil {
		return fmt.Errorf("kueue.Setup: the owner kind: %w", err)
	}
	name := "kueue-" + strings.ToLower(gvk.Kind)
	newJob := func() jobframework.GenericJob {
		j := NewJob(&typ, gvk, typ.New())
		j.controller = opts.ControllerName
		return j
	}
	if err := jobframework.SetupWorkloadOwnerIndex(ctx, mgr.GetFieldIndexer(), gvk); err != nil {
		return fmt.Errorf("kueue.Setup: the Workload index by %s owner: %w", gvk.Kind, err)
	}
	named := func(b *builder.Builder, _ client.Client) *builder.Builder { return b.Named(name) }
	factory := jobframework.NewGenericReconcilerFactory(newJob, named)
	//lint:ignore SA1019 Kueue's reconciler records through the core/v1 recorder.
	rec := mgr.GetEventRecorderFor(name)
	r, err := factory(ctx, mgr.GetClient(), mgr.GetFieldIndexer(), rec, kopts...)
	if err != nil {
		return fmt.Errorf("kueue.Setup: Kueue's reconciler: %w", err)
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("kueue.Setup: Kueue's reconciler: %w", err)
	}
	if opts.Webhook {
		d := &suspender[T]{typ: &typ, gvk: gvk, c: mgr.GetClient(), opts: jobframework.ProcessOptions(kopts...), controller: opts.ControllerName}
		if err := ctrl.NewWebhookManagedBy(mgr, typ.New()).WithDefaulter(d).Complete(); err != nil {
			return fmt.Errorf("kueue.Setup: the defaulting webhook: %w", err)
		}
	}
	return nil
}

// configOptions returns the options of Kueue's job reconciler that cfg, a Kueue
// Configuration, implies once defaulted (cfg itself is not modified); none for
// a nil cfg.
func configOptions(cfg *configapi.Configuration) ([]jobframework.Option, error) {
	if cfg == nil {
		return nil, nil
	}
	c := cfg.DeepCopy()
	configapi.SetDefaults_Configuration(c)
	sel, err := metav1.LabelSelectorAsSelector(c.ManagedJobsNamespaceSelector)
	if err != nil {
		return nil, fmt.Errorf("Configuration.managedJobsNamespaceSelector: %w", err)
	}
	out := []jobframework.Option{
		jobframework.WithManageJobsWithoutQueueName(c.ManageJobsWithoutQueueName),
		jobframework.WithManagedJobsNamespaceSelector(sel),
		jobframework.WithWaitForPodsReady(c.WaitForPodsReady),
		jobframework.WithObjectRetentionPolicies(c.ObjectRetentionPolicies),
	}
	if c.Integrations != nil {
		out = append(out, jobframework.WithLabelKeysToCopy(c.Integrations.LabelKeysToCopy))
	}
	return out, nil
}
