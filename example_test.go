package jobkit_test

import (
	"fmt"

	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/plain/active"
	"github.com/jobkit/jobkit/plan"
)

// One decision, two faces: how many pods a Job of 10 completions and parallelism 4
// wants running after 8 successes, asked with plain values (a scheduler) and with the
// Job's spec fields (an operator). The second is a conversion onto the first.
func Example() {
	fmt.Println(active.Want(active.Job{Completions: 10, Parallelism: 4, Succeeded: 8, Active: 4}))
	spec := plan.Spec{Completions: ptr.To[int32](10), Parallelism: ptr.To[int32](4)}
	fmt.Println(spec.WantActive(8, 4))
	// Output:
	// 2
	// 2
}
