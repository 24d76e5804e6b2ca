package controller_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/examples/trainingjob/controller"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// The TrainingJob's own Type runs in memory on the test rig, the same
// conversions and status round trip as on a real API server: a run without a
// launcher (one workload, Reconciler.Sync) and a run with one (two roles,
// Reconciler.SyncRoles) finish with every pod counted and no finalizer left.
func TestTypeInMemory(t *testing.T) {
	tests := []struct {
		name     string
		launcher bool
	}{
		{name: "one workload"},
		{name: "a launcher and workers", launcher: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tj := validTJ(func(tj *v1alpha1.TrainingJob) {
				tj.UID, tj.ResourceVersion, tj.Status = "", "", v1alpha1.TrainingJobStatus{}
				tj.Spec.Workers = 3
				tj.Spec.ManagedBy = ptr.To(controller.DefaultManagedBy)
			})
			if tc.launcher {
				tj = launcherTJ(func(l *v1alpha1.TrainingJob) {
					l.UID, l.ResourceVersion, l.Status = "", "", v1alpha1.TrainingJobStatus{}
					l.Spec.Workers = 3
					l.Spec.ManagedBy = ptr.To(controller.DefaultManagedBy)
				})
			}
			c, runs := reconciletest.NewStore(reconciletest.Options{Owner: controller.Kind, Seed: 3}, controller.Type)
			r, err := reconcile.New(reconcile.Config{Name: controller.DefaultManagedBy, Owner: controller.Kind, Clock: c.Clock()}, c, runs)
			require.NoError(t, err)
			_, err = runs.Create(tj)
			require.NoError(t, err)
			// Every pod runs and is ready; the launcher (or, without one, every worker) succeeds.
			c.Kubelet().SetScript(func(k *reconciletest.Kubelet, p *corev1.Pod) error {
				switch {
				case p.DeletionTimestamp != nil:
					return nil
				case p.Status.Phase == corev1.PodPending:
					if err := k.Run(p.Namespace, p.Name); err != nil {
						return err
					}
					return k.SetReady(p.Namespace, p.Name, true) // the launcher waits for ready workers
				case p.Status.Phase == corev1.PodRunning && (!tc.launcher || p.Labels[plaingroup.LabelRoleName] == controller.RoleLauncher):
					return k.Succeed(p.Namespace, p.Name)
				}
				return nil
			})
			d := reconciletest.NewDriver(c, r)
			d.SyncFunc, d.DoneFunc = runs.SyncFunc(r), runs.DoneFunc()
			_, err = d.Run(context.Background(), tj.Namespace, tj.Name, 100)
			require.NoError(t, err)
			got, err := runs.Get(tj.Namespace, tj.Name)
			require.NoError(t, err)
			require.True(t, controller.Finished(got), "the run finished: %+v", got.Status)
			if tc.launcher {
				require.Equal(t, "Completed", string(got.Status.TerminalState))
				require.NotNil(t, got.Status.Launcher)
				require.Equal(t, int32(1), got.Status.Launcher.Succeeded)
			} else {
				require.Equal(t, int32(3), got.Status.Succeeded)
			}
			for _, p := range c.ListPods(tj.Namespace) {
				require.False(t, controller.Kind.HasFinalizer(p), "pod %s keeps the finalizer", p.Name)
			}
		})
	}
}
