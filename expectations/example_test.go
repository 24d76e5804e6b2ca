package expectations_test

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/jobkit/jobkit/expectations"
)

// A reconciler raises before each create request and gives the expectation
// back when a request fails; the informer's add events lower the rest.
func ExampleExpectations_RaiseCreations() {
	e, _ := expectations.New[string](expectations.Config{})
	const job = "default/pi"

	for i := range 3 {
		_ = e.RaiseCreations(job, 1)
		if i == 2 { // the API server refused this one
			e.CreationObserved(job)
		}
	}
	fmt.Println("satisfied after the requests:", e.Satisfied(job))

	e.CreationObserved(job) // add event for pod 1
	e.CreationObserved(job) // add event for pod 2
	fmt.Println("satisfied after the events:", e.Satisfied(job))
	// Output:
	// satisfied after the requests: false
	// satisfied after the events: true
}

// ExpectCreations replaces whatever the key was waiting for.
func ExampleExpectations_ExpectCreations() {
	e, _ := expectations.New[string](expectations.Config{})
	_ = e.ExpectDeletions("default/pi", "uid-a", "uid-b")
	_ = e.ExpectCreations("default/pi", 2)
	st := e.Get("default/pi")
	fmt.Println("creations:", st.Creations, "deletions:", st.Deletions)

	err := e.ExpectCreations("default/pi", -1)
	fmt.Println(err)
	var ie *expectations.InputError
	fmt.Println("invalid input:", errors.As(err, &ie), ie.Field)
	// Output:
	// creations: 2 deletions: 0
	// expectations.ExpectCreations: count=-1: must not be negative
	// invalid input: true count
}

// A pod's deletion is seen twice: first as an update with a
// deletionTimestamp, then as the delete event. Tracked by UID, it counts once.
func ExampleExpectations_DeletionObserved() {
	e, _ := expectations.New[types.NamespacedName](expectations.Config{})
	job := types.NamespacedName{Namespace: "default", Name: "pi"}
	_ = e.ExpectDeletions(job, "uid-a", "uid-b")

	fmt.Println(e.DeletionObserved(job, "uid-a")) // deletionTimestamp update
	fmt.Println(e.DeletionObserved(job, "uid-a")) // delete event
	fmt.Println(e.DeletionObserved(job, "uid-z")) // not ours
	fmt.Println("satisfied:", e.Satisfied(job))
	fmt.Println(e.DeletionObserved(job, "uid-b"))
	fmt.Println("satisfied:", e.Satisfied(job))
	// Output:
	// true
	// false
	// false
	// satisfied: false
	// true
	// satisfied: true
}

// A record whose events were lost stops blocking its key after the TTL.
func ExampleExpectations_Satisfied() {
	clk := testingclock.NewFakePassiveClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	e, _ := expectations.New[string](expectations.Config{Clock: clk, TTL: time.Minute})
	_ = e.ExpectCreations("default/pi", 1)

	fmt.Println(e.Satisfied("default/pi"))
	clk.SetTime(clk.Now().Add(time.Minute + time.Second))
	fmt.Println(e.Satisfied("default/pi"))
	fmt.Println(e.Satisfied("default/never-seen"))
	// Output:
	// false
	// true
	// true
}

func ExampleExpectations_Get() {
	clk := testingclock.NewFakePassiveClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	e, _ := expectations.New[string](expectations.Config{Clock: clk})
	_ = e.ExpectCreations("default/pi", 3)
	_ = e.RaiseDeletions("default/pi", "uid-a")
	e.CreationObserved("default/pi")

	st := e.Get("default/pi")
	fmt.Printf("exists=%v creations=%d deletions=%d set=%s satisfied=%v\n",
		st.Exists, st.Creations, st.Deletions, st.SetAt.Format(time.RFC3339), st.Satisfied)

	e.Delete("default/pi")
	fmt.Printf("after Delete: exists=%v satisfied=%v\n", e.Get("default/pi").Exists, e.Satisfied("default/pi"))
	// Output:
	// exists=true creations=2 deletions=1 set=2026-01-01T12:00:00Z satisfied=false
	// after Delete: exists=false satisfied=true
}

func ExampleNew() {
	_, err := expectations.New[string](expectations.Config{TTL: -time.Second})
	fmt.Println(err)

	e, _ := expectations.New[string](expectations.Config{})
	fmt.Println(e.TTL())
	// Output:
	// expectations.New: Config.TTL=-1s: must not be negative (zero means the default, 5m0s)
	// 5m0s
}

// The tracking finalizer of two pods is being removed; until the informer shows
// each pod without it (or deleted), those pods must not be counted again.
func ExampleFinalizerRemovals() {
	f := expectations.NewFinalizerRemovals[string]()
	_ = f.Expect("default/pi", "uid-a", "uid-b")

	fmt.Println(f.Has("default/pi", "uid-a"))
	f.Observed("default/pi", "uid-a") // update without the finalizer
	fmt.Println(sets.List(f.Pending("default/pi")))
	f.Observed("default/pi", "uid-b") // pod deleted
	fmt.Println(f.PendingCount("default/pi"), f.Len())
	// Output:
	// true
	// [uid-b]
	// 0 0
}
