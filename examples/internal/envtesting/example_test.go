package envtesting_test

import (
	"fmt"
	"time"

	"github.com/jobkit/jobkit/examples/internal/envtesting"
)

// A CRD test names its objects after the test, so that parallel subtests do not
// collide.
func ExampleObjectName() {
	fmt.Println(envtesting.ObjectName("TestSpecRefused/bad_role_name", 63))
	fmt.Println(envtesting.ObjectName("TestStatusWrites/completionTime_before_startTime", 20))
	// Output:
	// testspecrefused-bad-role-name
	// ime-before-starttime
}

// Until polls a condition and, when it does not come to hold, says what the
// condition last saw.
func ExamplePoll_Until() {
	p := envtesting.Poll{Timeout: 20 * time.Millisecond, Every: time.Millisecond}
	running := 0
	err := p.Until(func() (bool, string) {
		running++
		return running == 3, fmt.Sprintf("%d running", running)
	})
	fmt.Println(err, running)
	err = p.Until(func() (bool, string) { return false, "0 running" })
	fmt.Println(err)
	// Output:
	// <nil> 3
	// timed out after 20ms: 0 running
}
