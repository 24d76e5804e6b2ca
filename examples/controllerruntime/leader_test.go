package controllerruntime_test

import (
	"context"
	"testing"
	"time"

	"github.com/jobkit/jobkit/examples/controllerruntime"
	"github.com/jobkit/jobkit/reconcile"
)

// Two replicas with leader election: the second runs only once the first has
// stopped and released the Lease.
func TestLeaderElection(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mo := controllerruntime.ManagerOptions{
		LeaderElection:          true,
		LeaderElectionNamespace: "default",
		LeaderElectionID:        "cr-leader-election-test",
		SkipNameValidation:      true,
	}
	rc := reconcile.Config{Name: "test.jobkit.dev/leader"}
	o := controllerruntime.Options{SkipNameValidation: true, ControllerName: "cr-leader-test"}

	first, err := controllerruntime.Start(ctx, restConfig, mo, rc, o)
	if err != nil {
		t.Fatalf("Start(first) error = %v", err)
	}
	type started struct {
		r   *controllerruntime.Running
		err error
	}
	second := make(chan started, 1)
	go func() {
		r, err := controllerruntime.Start(ctx, restConfig, mo, rc, o)
		second <- started{r, err}
	}()
	select {
	case s := <-second:
		if s.r != nil {
			_ = s.r.Stop()
		}
		t.Fatalf("the second replica started (error %v) while the first held the Lease", s.err)
	case <-time.After(3 * time.Second):
	}
	if err := first.Stop(); err != nil {
		t.Errorf("first.Stop() = %v", err)
	}
	select {
	case s := <-second:
		if s.err != nil {
			t.Fatalf("Start(second) error = %v", s.err)
		}
		if err := s.r.Stop(); err != nil {
			t.Errorf("second.Stop() = %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the second replica did not take the Lease within 30s of the first stopping")
	}
}
