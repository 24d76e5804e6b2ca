package reconcile_test

import (
	"context"
	"fmt"

	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/reconcile"
)

// SyncChildJobs executes the plan of a group whose roles run as child Jobs: the
// first sync writes the status, then creates the children; once the cache shows
// them, a sync makes no call. The client here is the in-memory groupAPI of the
// tests; a controller passes an adapter of its API client (examples/jobset).
func ExampleReconciler_SyncChildJobs() {
	api := newGroupAPI()
	r, err := reconcile.New(reconcile.Config{Name: plaingroup.ControllerName}, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 2 {
		res, err := r.SyncChildJobs(context.Background(), api.cache(), api, api)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("calls %q: %d status write, %d created\n", api.takeCalls(), res.StatusWrites, res.Created)
	}
	// Output:
	// calls "status; create g-w-0; create g-w-1": 1 status write, 2 created
	// calls "": 0 status write, 0 created
}
