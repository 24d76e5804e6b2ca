package controllerruntime

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/jobkit/jobkit/controllerruntime/metrics"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// registered holds the Metrics registered with controller-runtime's registry, by
// subsystem: every controller of one owner kind in the process shares them (a
// registry takes a collector name once). Setups of several goroutines (parallel
// tests) register one.
var registered struct {
	sync.Mutex
	bySubsystem map[string]*metrics.Metrics
}

// defaultMetrics returns the Metrics of kind, registered with controller-runtime's
// registry on first use. The stale-skips series is labelled with the kind's
// resource as mgr's REST mapper names it, or the kind in lower case and "s" when
// the mapper does not know it yet.
func defaultMetrics(mgr manager.Manager, kind owner.Kind, subsystem string) (*metrics.Metrics, error) {
	if subsystem == "" {
		subsystem = metrics.Subsystem(kind)
	}
	registered.Lock()
	defer registered.Unlock()
	if m, ok := registered.bySubsystem[subsystem]; ok {
		return m, nil
	}
	res := schema.GroupResource{Group: kind.Group, Resource: strings.ToLower(kind.Kind) + "s"}
	if mapping, err := mgr.GetRESTMapper().RESTMapping(schema.GroupKind{Group: kind.Group, Kind: kind.Kind}, kind.Version); err == nil {
		res = mapping.Resource.GroupResource()
	}
	m := metrics.New(subsystem, res)
	if err := m.Register(crmetrics.Registry); err != nil {
		return nil, fmt.Errorf("register the %s_* metrics: %w", subsystem, err)
	}
	if registered.bySubsystem == nil {
		registered.bySubsystem = map[string]*metrics.Metrics{}
	}
	registered.bySubsystem[subsystem] = m
	return m, nil
}

// addMetricsHandler adds to the owner informer of mgr the handler that counts
// what the Reconciler does not report. Before the manager starts, GetInformer
// registers the informer the controller's watch uses too, without waiting for it.
func addMetricsHandler[T client.Object](mgr manager.Manager, m *metrics.Metrics, cfg reconcile.Config, typ reconcile.Type[T]) error {
	inf, err := mgr.GetCache().GetInformer(context.Background(), typ.New())
	if err == nil {
		_, err = inf.AddEventHandler(m.EventHandler(cfg.Name, cfg.Owner, func(obj any) (*plan.Workload, bool) {
			t, ok := obj.(T)
			if !ok {
				return nil, false
			}
			w, err := typ.Owner(t)
			return w, err == nil
		}))
	}
	if err != nil {
		return fmt.Errorf("owner informer for the metrics: %w", err)
	}
	return nil
}
