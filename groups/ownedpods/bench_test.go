package ownedpods_test

import (
	"fmt"
	"testing"

	"github.com/jobkit/jobkit/groups/ownedpods"
)

// running is a training job of n workers and a launcher, every pod running and
// the status written: the steady state of most syncs.
func running(b *testing.B, workers int32) ownedpods.Input {
	c := newCluster(b, trainingJob(workers, 3))
	for range 3 {
		c.sync()
		c.runAll("worker")
		c.runAll("launcher")
	}
	c.syncUntil(10)
	if n := len(c.pods); n != int(workers)+1 {
		b.Fatalf("%d pods, want %d", n, workers+1)
	}
	return c.input()
}

func BenchmarkCompute(b *testing.B) {
	for _, workers := range []int32{64, 1000} {
		b.Run(fmt.Sprintf("launcher+%d", workers), func(b *testing.B) {
			in := running(b, workers)
			b.ReportAllocs()
			for b.Loop() {
				p, err := ownedpods.Compute(in)
				if err != nil || p.StatusChanged {
					b.Fatalf("steady state: err %v, changed %v", err, p.StatusChanged)
				}
			}
		})
	}
}

// The steady state of a group restarted in place: every pod reports the
// group's current attempt, so each sync reads the attempts (O(pods)) and
// writes nothing.
func BenchmarkComputeInPlace(b *testing.B) {
	for _, workers := range []int32{64, 1000} {
		b.Run(fmt.Sprintf("leader+%d", workers), func(b *testing.B) {
			w := inPlaceJob(3)
			w.Roles[1].Spec.Completions, w.Roles[1].Spec.Parallelism = &workers, &workers
			c := newCluster(b, w)
			c.syncUntil(10)
			c.runAll("launcher")
			c.runAll("worker")
			for _, p := range c.pods {
				annotate(p, "0")
			}
			c.syncUntil(10)
			in := c.input()
			b.ReportAllocs()
			for b.Loop() {
				p, err := ownedpods.Compute(in)
				if err != nil || p.StatusChanged || p.Status.InPlace.Current == nil {
					b.Fatalf("steady state: err %v, changed %v, %+v", err, p.StatusChanged, p.Status.InPlace)
				}
			}
		})
	}
}
