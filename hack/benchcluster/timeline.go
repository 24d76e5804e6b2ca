package main

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// timeline is when a run's pods reached each step, read after the run from the
// pods themselves (the API server's clock, to the second): created
// (metadata.creationTimestamp) and finished (the container's finishedAt, which kwok
// writes). Each step gives the seconds from the run's first create call until half
// and until all of the pods had reached it. With the run's time to the finished
// condition it says where one controller spends the time another does not:
// creating, waiting for kwok, or after the last pod finished (finalizers and
// counting).
type timeline struct {
	created, finished steps
}

// steps are the seconds until half and until all of the pods reached a step; n is
// how many did.
type steps struct {
	half, all float64
	n         int
}

func (s steps) String() string {
	if s.n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f/%.0f", s.half, s.all)
}

func (t timeline) String() string {
	return fmt.Sprintf("created %v s, finished %v s (half/all)", t.created, t.finished)
}

// podTimeline reads the timeline of pods relative to start.
func podTimeline(pods []corev1.Pod, start time.Time) timeline {
	var created, finished []float64
	since := func(t time.Time) float64 { return t.Sub(start).Seconds() }
	for i := range pods {
		p := &pods[i]
		created = append(created, since(p.CreationTimestamp.Time))
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil && !t.FinishedAt.IsZero() {
				finished = append(finished, since(t.FinishedAt.Time))
				break
			}
		}
	}
	return timeline{created: quantiles(created), finished: quantiles(finished)}
}

func quantiles(v []float64) steps {
	if len(v) == 0 {
		return steps{}
	}
	slices.Sort(v)
	return steps{half: v[(len(v)-1)/2], all: v[len(v)-1], n: len(v)}
}
