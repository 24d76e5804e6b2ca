package controllerruntime

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/jobkit/jobkit/groups/childjobs"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/reconcile"
)

// plannedType is groupType with a volume claim data (mounted by every role)
// and a disruption budget of 1.
var plannedType = func() reconcile.Type[*testGroup] {
	t := groupType
	t.ChildJobs = func(g *testGroup) (*childjobs.Input, error) {
		in, err := groupType.ChildJobs(g)
		if err != nil {
			return nil, err
		}
		in.Spec.VolumeClaims = []plaingroup.VolumeClaim{{Name: "data"}}
		in.ClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
		one := intstr.FromInt32(1)
		in.DisruptionBudget = &one
		for i := range in.Templates {
			c := &in.Templates[i].Spec.Template.Spec.Containers[0]
			c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		}
		return in, nil
	}
	return t
}()

// A group with a claim and a budget, synced three times: with
// Options.ClaimsAndBudgets the syncs read both from the cache and create each
// once; without, every sync of the running group sends both creations again
// (answered AlreadyExists).
func TestClaimsAndBudgetsFromTheCache(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		cached bool
		want   int32
	}{{cached: true, want: 1}, {cached: false, want: 3}} {
		g := newGroup("ns", "g", groupController)
		g.UID = "g-uid"
		var claims, budgets atomic.Int32
		funcs := interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			switch obj.(type) {
			case *corev1.PersistentVolumeClaim:
				claims.Add(1)
			case *policyv1.PodDisruptionBudget:
				budgets.Add(1)
			}
			return c.Create(ctx, obj, opts...)
		}}
		c := fake.NewClientBuilder().WithScheme(groupScheme(t)).WithObjects(g).WithStatusSubresource(&testGroup{}).
			WithIndex(&batchv1.Job{}, OwnerUIDIndex, OwnerUID).WithInterceptorFuncs(funcs).Build()
		ctl, err := NewController(c, c, Options[*testGroup]{Type: plannedType, ClaimsAndBudgets: tt.cached,
			Config: reconcile.Config{Name: groupController, Clock: clocktesting.NewFakePassiveClock(now), Events: &eventLog{}, Logger: logr.Discard()}})
		if err != nil {
			t.Fatal(err)
		}
		req := crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "g"}}
		for range 3 {
			if _, err := ctl.Reconcile(t.Context(), req); err != nil {
				t.Fatalf("ClaimsAndBudgets %v: Reconcile() = %v", tt.cached, err)
			}
		}
		if claims.Load() != tt.want || budgets.Load() != tt.want {
			t.Errorf("ClaimsAndBudgets %v: %d claim and %d budget creations in 3 syncs, want %d of each",
				tt.cached, claims.Load(), budgets.Load(), tt.want)
		}
		pvc := &corev1.PersistentVolumeClaim{}
		if err := c.Get(t.Context(), types.NamespacedName{Namespace: "ns", Name: "data-g"}, pvc); err != nil {
			t.Errorf("ClaimsAndBudgets %v: the claim data-g: %v", tt.cached, err)
		}
	}
}
