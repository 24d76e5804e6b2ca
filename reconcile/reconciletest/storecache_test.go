package reconciletest_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// storeRig is one Store of a kind, seen through what every Store has.
type storeRig struct {
	c      *reconciletest.Cluster
	create func(name string) error
	update func(name string) error
	delete func(name string) error
	cached func(name string) bool
	onEv   func(func(reconcile.OwnerEvent))
}

func rigOf[T interface {
	metav1.Object
	comparable
}](c *reconciletest.Cluster, s interface {
	Create(T) (T, error)
	Update(string, string, func(T)) (T, error)
	Delete(string, string) error
	Cached(string, string) T
	OnEvent(func(reconcile.OwnerEvent))
}, newObj func(name string) T) storeRig {
	var zero T
	return storeRig{
		c:      c,
		create: func(name string) error { _, err := s.Create(newObj(name)); return err },
		update: func(name string) error {
			_, err := s.Update(ns, name, func(o T) { o.SetLabels(map[string]string{"changed": "yes"}) })
			return err
		},
		delete: func(name string) error { return s.Delete(ns, name) },
		cached: func(name string) bool { return s.Cached(ns, name) != zero },
		onEv:   s.OnEvent,
	}
}

// Every Store's writes are watch events that reach the Cache as pod events do:
// late (event latency), lost (DropAt: the cache takes the change, no handler
// hears it) and listed anew on Reset, whatever the owner's type and shape.
func TestStoreEventsReachTheCache(t *testing.T) {
	runKind := owner.Kind{Group: "runs.example.com", Version: "v1", Kind: "Run", Finalizer: "runs.example.com/tracking"}
	tests := []struct {
		name string
		rig  func() storeRig
	}{
		{name: "Jobs", rig: func() storeRig {
			c := reconciletest.NewCluster(reconciletest.Options{EventLatency: 2 * time.Second})
			return rigOf(c, c.Jobs(), func(name string) *batchv1.Job { return reconciletest.NewJob(ns, name, 1, 1) })
		}},
		{name: "Tasks", rig: func() storeRig {
			c, s := reconciletest.NewStore(reconciletest.Options{Owner: taskKind, EventLatency: 2 * time.Second}, reconciletest.TaskType)
			return rigOf(c, s, func(name string) *reconciletest.Task { return newTask(ns, name, 1, 1) })
		}},
		{name: "Runs, owners of roles", rig: func() storeRig {
			c, s := reconciletest.NewStore(reconciletest.Options{Owner: runKind, EventLatency: 2 * time.Second}, reconciletest.RunType)
			return rigOf(c, s, func(name string) *reconciletest.Run {
				return &reconciletest.Run{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
					Spec: ownedpods.Workload{Roles: []ownedpods.Role{{Name: "worker"}}}}
			})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.rig()
			cache := r.c.Cache()
			var heard []string
			r.onEv(func(ev reconcile.OwnerEvent) {
				switch {
				case ev.Old == nil:
					heard = append(heard, "add "+ev.New.Name)
				case ev.New == nil:
					heard = append(heard, "delete "+ev.Old.Name)
				default:
					heard = append(heard, "update "+ev.New.Name)
				}
			})
			require.NoError(t, r.create("a"))
			require.NoError(t, r.update("a"))
			require.NoError(t, r.create("b"))
			assert.Zero(t, cache.DeliverDue(), "nothing is due before the latency")
			assert.False(t, r.cached("a"), "the Cache lags the store")

			r.c.Clock().Step(2 * time.Second)
			assert.Equal(t, 3, cache.DeliverDue())
			assert.True(t, r.cached("a"))
			assert.Equal(t, []string{"add a", "update a", "add b"}, heard)

			require.NoError(t, r.delete("b"))
			pending := cache.Pending()
			require.Len(t, pending, 1)
			assert.Equal(t, watch.Deleted, pending[0].Type)
			assert.Equal(t, "b", pending[0].Owner.GetName())
			require.NoError(t, cache.DropAt(0))
			assert.False(t, r.cached("b"), "a lost event still reaches the cache")
			assert.Len(t, heard, 3, "but no handler")

			cache.Reset()
			assert.False(t, r.cached("a"), "a new informer starts empty")
			cache.DeliverAll()
			assert.True(t, r.cached("a"), "and lists the stored owners")
			assert.Equal(t, "add a", heard[len(heard)-1])
		})
	}
}
