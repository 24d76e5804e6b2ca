package podorder_test

import (
	"fmt"
	"time"

	"github.com/jobkit/jobkit/plain/podorder"
)

// Plain facts sort as they are: facts is the identity.
func ExampleSortFunc_facts() {
	morning := time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC)
	tasks := []podorder.Pod{
		{Name: "ready-since-morning", Assigned: true, Phase: podorder.PhaseRunning, Ready: true, ReadySince: morning},
		{Name: "ready-since-noon", Assigned: true, Phase: podorder.PhaseRunning, Ready: true, ReadySince: morning.Add(4 * time.Hour)},
		{Name: "starting", Assigned: true, Phase: podorder.PhaseRunning},
		{Name: "placed", Assigned: true, Phase: podorder.PhasePending},
		{Name: "waiting-for-a-worker", Phase: podorder.PhasePending},
	}
	podorder.SortFunc(tasks, func(p podorder.Pod) podorder.Pod { return p })
	for _, t := range tasks {
		fmt.Println(t.Name)
	}
	// Output:
	// waiting-for-a-worker
	// placed
	// starting
	// ready-since-noon
	// ready-since-morning
}

func ExampleCompare() {
	flaky := podorder.Pod{Name: "flaky", Assigned: true, Phase: podorder.PhaseRunning, Restarts: 3}
	steady := podorder.Pod{Name: "steady", Assigned: true, Phase: podorder.PhaseRunning}
	fmt.Println(podorder.Compare(&flaky, &steady) < 0)
	// Output: true
}

// A scheduler's own task type, ordered through the facts it can tell.
type task struct {
	id      string
	worker  string
	started time.Time
}

func ExampleSortFunc() {
	t0 := time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC)
	tasks := []task{{"a", "w1", t0}, {"b", "", time.Time{}}, {"c", "w2", t0.Add(time.Minute)}}
	podorder.SortFunc(tasks, func(t task) podorder.Pod {
		p := podorder.Pod{Name: t.id, Created: t.started, Assigned: t.worker != ""}
		if p.Assigned {
			p.Phase = podorder.PhaseRunning
		}
		return p
	})
	for _, t := range tasks {
		fmt.Print(t.id, " ")
	}
	fmt.Println()
	// Output: b c a
}
