package kueueflags

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/yaml"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"

	"github.com/jobkit/jobkit/kueue"
	"github.com/jobkit/jobkit/reconcile"
)

// Flags are the Kueue flags of a command, once parsed.
type Flags struct {
	// Enabled is --kueue: the owners are queued by Kueue.
	Enabled bool
	// ConfigFile is --kueue-config: the path of Kueue's Configuration, empty
	// for Kueue's defaults.
	ConfigFile string
}

// Register adds --kueue and --kueue-config to fs and returns where they are
// parsed into.
func Register(fs *flag.FlagSet) *Flags {
	f := &Flags{}
	fs.BoolVar(&f.Enabled, "kueue", false, "queue the owners through Kueue (sigs.k8s.io/kueue): run Kueue's job reconciler for the kind in this manager; Kueue's own manager must list the kind in integrations.externalFrameworks")
	fs.StringVar(&f.ConfigFile, "kueue-config", "", "the Kueue Configuration file the cluster's Kueue runs with (its manageJobsWithoutQueueName, managedJobsNamespaceSelector, waitForPodsReady, integrations.labelKeysToCopy and objectRetentionPolicies are followed); empty: Kueue's defaults. Only with --kueue")
	return f
}

// Config reads the Configuration of --kueue-config: nil when the flag is
// empty; an error names the file and the field when the file is not a Kueue
// Configuration (config.kueue.x-k8s.io/v1beta2, kind Configuration) or holds
// a field Kueue does not know.
func (f *Flags) Config() (*configapi.Configuration, error) {
	if f.ConfigFile == "" {
		return nil, nil
	}
	if !f.Enabled {
		return nil, errors.New("--kueue-config is set without --kueue")
	}
	b, err := os.ReadFile(f.ConfigFile)
	if err != nil {
		return nil, fmt.Errorf("--kueue-config: %w", err)
	}
	cfg := &configapi.Configuration{}
	if err := yaml.UnmarshalStrict(b, cfg); err != nil {
		return nil, fmt.Errorf("--kueue-config=%s: %w", f.ConfigFile, err)
	}
	if gv := configapi.GroupVersion.String(); cfg.APIVersion != gv || cfg.Kind != "Configuration" {
		return nil, fmt.Errorf("--kueue-config=%s: apiVersion %q, kind %q: want %q, \"Configuration\"", f.ConfigFile, cfg.APIVersion, cfg.Kind, gv)
	}
	return cfg, nil
}

// Setup makes the owners of typ Kueue-managed in mgr when --kueue is set
// (kueue.Setup with the Configuration of --kueue-config and controller, the
// name of jobkit's controller for the kind); without --kueue it checks only
// that --kueue-config is not set alone. It reports whether Kueue is on.
func Setup[T client.Object](ctx context.Context, f *Flags, mgr manager.Manager, typ reconcile.Type[T], controller string) (bool, error) {
	cfg, err := f.Config()
	if err != nil || !f.Enabled {
		return false, err
	}
	if err := kueue.Setup(ctx, mgr, typ, kueue.Options{Configuration: cfg, ControllerName: controller}); err != nil {
		return false, err
	}
	return true, nil
}
