package reconciletest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/jobkit/jobkit/reconcile"
)

// Recorder is a reconcile.EventRecorder and a reconcile.Metrics for tests. It keeps
// the events it is given, each as "<type> <reason> <message>" (List, Reasons,
// Count), and counts the metrics, as "metric{label,label...}" → value (Get, All;
// syncs count 1 each, durations are dropped). One Recorder may serve as both
// Config.Events and Config.Metrics. It is safe for concurrent use; the zero value
// is ready.
type Recorder struct {
	mu     sync.Mutex
	events []string
	counts map[string]int
}

var (
	_ reconcile.EventRecorder = (*Recorder)(nil)
	_ reconcile.Metrics       = (*Recorder)(nil)
)

// Eventf records an event.
func (e *Recorder) Eventf(_ runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, eventtype+" "+reason+" "+fmt.Sprintf(messageFmt, args...))
}

// List returns the events recorded so far.
func (e *Recorder) List() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.events)
}

// Reasons returns the reasons of the events recorded so far, in order.
func (e *Recorder) Reasons() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, len(e.events))
	for i, ev := range e.events {
		out[i] = strings.SplitN(ev, " ", 3)[1]
	}
	return out
}

// Count returns how many events with reason were recorded.
func (e *Recorder) Count(reason string) int {
	n := 0
	for _, r := range e.Reasons() {
		if r == reason {
			n++
		}
	}
	return n
}

func (m *Recorder) add(name string, n int, labels ...string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.counts == nil {
		m.counts = map[string]int{}
	}
	m.counts[name+"{"+strings.Join(labels, ",")+"}"] += n
}

// JobSync counts job_syncs_total.
func (m *Recorder) JobSync(mode, result, action string, _ time.Duration) {
	m.add("job_syncs_total", 1, mode, result, action)
}

// JobFinished counts jobs_finished_total.
func (m *Recorder) JobFinished(mode, result, reason string) {
	m.add("jobs_finished_total", 1, mode, result, reason)
}

// PodsFinished counts job_pods_finished_total.
func (m *Recorder) PodsFinished(mode, result string, n int) {
	m.add("job_pods_finished_total", n, mode, result)
}

// PodFailuresHandledByPolicy counts pod_failures_handled_by_failure_policy_total.
func (m *Recorder) PodFailuresHandledByPolicy(action string, n int) {
	m.add("pod_failures_handled_by_failure_policy_total", n, action)
}

// TerminatedPodsTrackingFinalizer counts terminated_pods_tracking_finalizer_total.
func (m *Recorder) TerminatedPodsTrackingFinalizer(event string) {
	m.add("terminated_pods_tracking_finalizer_total", 1, event)
}

// PodsCreated counts job_pods_creation_total.
func (m *Recorder) PodsCreated(reason, status string, n int) {
	m.add("job_pods_creation_total", n, reason, status)
}

// StaleSyncSkipped counts stale_sync_skips_total.
func (m *Recorder) StaleSyncSkipped() { m.add("stale_sync_skips_total", 1) }

// Get returns the value of a series, for example
// Get(`job_pods_finished_total{NonIndexed,succeeded}`).
func (m *Recorder) Get(series string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counts[series]
}

// All returns a copy of every series.
func (m *Recorder) All() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.counts)
}
