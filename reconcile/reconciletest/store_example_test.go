package reconciletest_test

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// The Jobs of a Cluster are a Store like any owner's: a write is stored at once,
// and reaches the Cache (and the Store's event handlers) when its watch event
// is delivered, here one second later.
func ExampleCluster_Jobs() {
	c := reconciletest.NewCluster(reconciletest.Options{EventLatency: time.Second})
	jobs := c.Jobs()
	jobs.OnEvent(func(ev reconcile.OwnerEvent) {
		fmt.Println("event: added", ev.Old == nil, "generation", ev.New.Generation)
	})
	_, _ = jobs.Create(reconciletest.NewJob("default", "render", 2, 2))
	_, _ = jobs.Update("default", "render", func(j *batchv1.Job) { j.Spec.Parallelism = new(int32) })

	stored, _ := jobs.Get("default", "render")
	fmt.Println("stored generation:", stored.Generation, "cached:", jobs.Cached("default", "render") != nil)
	c.Clock().Step(time.Second)
	c.Cache().DeliverDue()
	fmt.Println("cached generation:", jobs.Cached("default", "render").Generation, "owner facts:", jobs.CachedOwner("default", "render") != nil)
	// Output:
	// stored generation: 2 cached: false
	// event: added true generation 1
	// event: added false generation 2
	// cached generation: 2 owner facts: true
}

// ReadOwner is a live read of a Store's owner, for reconcile.Config.ReadOwner:
// it sees a deletion the Cache does not show yet.
func ExampleStore_ReadOwner() {
	c := reconciletest.NewCluster(reconciletest.Options{})
	jobs := c.Jobs()
	_, _ = jobs.Create(reconciletest.NewJob("default", "render", 1, 1))
	c.Cache().DeliverAll()
	_ = jobs.Delete("default", "render")

	w, err := jobs.ReadOwner(context.Background(), "default", "render")
	fmt.Println("read:", w, err, "cached:", jobs.Cached("default", "render") != nil)
	fmt.Println("cached owners:", len(jobs.CachedList()), "stored:", len(jobs.List()))
	// Output:
	// read: <nil> <nil> cached: true
	// cached owners: 1 stored: 0
}
