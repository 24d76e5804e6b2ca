package reconciletest

// The restart figures of issue 37: a group of many units of 8 pods (child Jobs,
// or roles of one owner) whose pods run until one fails; the group restarts
// (failure policy maxRestarts 1) and the figure measures the time from the
// failure to every pod of the new attempt running, and the writes by kind and
// by controller in between. The machinery is the figures' (figRun: the latency
// model, the workers, the end of the run); this file adds the kubelet's part of
// a deletion, the watch of the attempts, and the group controller's calls.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// restartPods is the pods of one unit (a child Job, a role) of the restart
// figures.
const restartPods = 8

// restartResult is what one run of the restart figures measured.
type restartResult struct {
	path     string
	units    int
	lag      time.Duration
	startInL float64 // creation to every pod of attempt 0 running
	// restartInL is the time from the failure to every pod of attempt 1
	// running.
	restartInL float64
	// The writes from the failure to the end, by controller: the owner's
	// (roles: every call; child Jobs: the group controller's Job creates,
	// deletes, patches of spec.suspend and status), the Job controller's, and
	// the garbage collector's (pod deletes; patches: the foreground-deletion
	// finalizer of a child Job, removed once its pods are gone).
	owner, jobs, gc       callCounts
	conflicts, syncErrors int
	// created counts the pods of attempt 1 created.
	created int
}

func (r *restartResult) writes() int { return r.owner.total() + r.jobs.total() + r.gc.total() }

// restartWatch follows the pods of each attempt of a restart figure (a write
// hook) and plays the kubelet's part of a deletion: a pod being deleted stops
// (phase Failed) and is confirmed gone once its finalizers are removed, after
// the event lag.
type restartWatch struct {
	f     *figRun
	pods  int // of one attempt
	lag   time.Duration
	ready chan struct{} // closed when every pod of attempt 0 runs

	mu sync.Mutex
	// running holds the pods running and not being deleted, by attempt;
	// live counts the pods in the store by attempt, owned holds the names of
	// the pods in the store by controller UID (the garbage collector deletes
	// them, then waits for none).
	running  map[string]map[types.UID]bool
	live     map[string]int
	owned    map[types.UID]map[string]bool
	emptied  map[types.UID]chan struct{}
	created  int // pods of attempt 1
	stopping map[types.UID]bool
	failedAt time.Time
	runAt    [2]time.Time // when every pod of attempt 0, then 1, ran
}

func newRestartWatch(f *figRun, pods int, lag time.Duration) *restartWatch {
	w := &restartWatch{f: f, pods: pods, lag: lag, ready: make(chan struct{}),
		running: map[string]map[types.UID]bool{"0": {}, "1": {}}, live: map[string]int{},
		owned: map[types.UID]map[string]bool{}, emptied: map[types.UID]chan struct{}{}, stopping: map[types.UID]bool{}}
	f.c.OnWrite(w.observe)
	return w
}

// observe is the write hook (under the Cluster's lock).
func (w *restartWatch) observe(ev WatchEvent) {
	p := ev.Pod
	if p == nil {
		return
	}
	attempt := p.Labels[plaingroup.LabelRestartAttempt]
	owner := controllerUID(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	switch ev.Type {
	case watch.Added:
		w.live[attempt]++
		if w.owned[owner] == nil {
			w.owned[owner] = map[string]bool{}
		}
		w.owned[owner][p.Name] = true
		if attempt == "1" {
			w.created++
		}
	case watch.Deleted:
		w.live[attempt]--
		if delete(w.owned[owner], p.Name); len(w.owned[owner]) == 0 {
			delete(w.owned, owner)
			if ch := w.emptied[owner]; ch != nil {
				close(ch)
				delete(w.emptied, owner)
			}
		}
	}
	run := w.running[attempt]
	if run != nil {
		if ev.Type != watch.Deleted && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			run[p.UID] = true
		} else {
			delete(run, p.UID)
		}
	}
	if ev.Type != watch.Deleted && p.DeletionTimestamp != nil && !w.stopping[p.UID] {
		w.stopping[p.UID] = true
		w.stop(p.Namespace, p.Name)
	}
	now := time.Now()
	switch {
	case attempt == "0" && w.runAt[0].IsZero() && len(run) == w.pods:
		w.runAt[0] = now
		close(w.ready)
	case attempt == "1" && w.runAt[1].IsZero() && len(run) == w.pods:
		w.runAt[1] = now
	}
}

// stop is the kubelet stopping a pod being deleted, once the deletion's event
// reaches it: the pod is killed and its deletion confirmed.
func (w *restartWatch) stop(namespace, name string) {
	f := w.f
	f.begin()
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer f.end()
		time.Sleep(w.lag)
		f.tick()
		_ = f.c.Kubelet().FinishTermination(namespace, name)
	}()
}

// ownedBy returns the names of the pods controlled by uid.
func (w *restartWatch) ownedBy(uid types.UID) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Sorted(maps.Keys(w.owned[uid]))
}

// emptiedCh returns a channel closed once no pod controlled by uid is left
// (closed already when none is).
func (w *restartWatch) emptiedCh(uid types.UID) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := make(chan struct{})
	if len(w.owned[uid]) == 0 {
		close(ch)
		return ch
	}
	w.emptied[uid] = ch
	return ch
}

// restarted reports whether every pod of attempt 1 runs and none of attempt 0
// is left.
func (w *restartWatch) restarted() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.runAt[1].IsZero() && w.live["0"] == 0
}

// fail waits until every pod of attempt 0 runs and the run is quiet, then
// calls snap (to count the writes from there) and fails the pod victim picks
// among them (exit code 1).
func (w *restartWatch) fail(ctx context.Context, victim func(*corev1.Pod) bool, snap func()) error {
	f := w.f
	select {
	case <-ctx.Done():
		return fmt.Errorf("restart figure: the pods of attempt 0 did not all run: %w", ctx.Err())
	case <-w.ready:
	}
	for {
		f.settle()
		if f.quiet() {
			break
		}
		time.Sleep(f.L)
	}
	f.tick()
	for _, p := range f.c.ListPods(figNamespace) {
		if p.Labels[plaingroup.LabelRestartAttempt] == "0" && victim(p) {
			snap()
			w.mu.Lock()
			w.failedAt = time.Now()
			w.mu.Unlock()
			return f.c.Kubelet().Fail(p.Namespace, p.Name, 1)
		}
	}
	return fmt.Errorf("restart figure: no running pod to fail")
}

// times returns the time from start to every pod of attempt 0 running, and
// from the failure to every pod of attempt 1 running, in L.
func (w *restartWatch) times() (startInL, restartInL float64, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	L := float64(w.f.L)
	if w.failedAt.IsZero() || w.runAt[1].IsZero() {
		return 0, 0, fmt.Errorf("restart figure: %d of %d pods of attempt 1 running at the end", len(w.running["1"]), w.pods)
	}
	return float64(w.runAt[0].Sub(w.f.start)) / L, float64(w.runAt[1].Sub(w.failedAt)) / L, nil
}
