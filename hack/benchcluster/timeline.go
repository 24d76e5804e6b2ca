package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// timeline is when a run's pods reached each step, read after the run from the
// pods themselves (the API server's clock, to the second): created
// (metadata.creationTimestamp), finished (the container's finishedAt, which kwok
// writes), and last written by the controller (the time of its managedFields entry
// of the main resource: for a pod that ran to the end, the finalizer removal). Each
// step gives the seconds from the run's first create call until half and until all
// of the pods had reached it. It says where one controller spends the time another
// does not: creating, waiting for kwok, or removing finalizers.
type timeline struct {
	created, finished, released steps
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
	return fmt.Sprintf("created %v s, finished %v s, released %v s (half/all)", t.created, t.finished, t.released)
}

// podTimeline reads the timeline of pods relative to start. kwok's own entries
// (manager kwok) and the status subresource's are not the controller's writes.
func podTimeline(pods []corev1.Pod, start time.Time) timeline {
	var created, finished, released []float64
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
		var last time.Time
		for _, m := range p.ManagedFields {
			if m.Subresource == "" && m.Time != nil && !strings.HasPrefix(m.Manager, "kwok") && m.Time.After(last) {
				last = m.Time.Time
			}
		}
		if !last.IsZero() {
			released = append(released, since(last))
		}
	}
	return timeline{created: quantiles(created), finished: quantiles(finished), released: quantiles(released)}
}

func quantiles(v []float64) steps {
	if len(v) == 0 {
		return steps{}
	}
	slices.Sort(v)
	return steps{half: v[(len(v)-1)/2], all: v[len(v)-1], n: len(v)}
}
