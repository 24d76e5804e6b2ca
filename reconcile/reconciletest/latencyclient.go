package reconciletest

import (
	"context"
	"fmt"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/reconcile"
)

// latencyClient delays every call by the latency, on the bubble's clock, and counts
// the calls. The write happens at the end of the call, at the simulated time the
// caller gets the answer; pods succeed as soon as they are created.
type latencyClient struct {
	c       *Cluster
	clk     *clocktesting.FakeClock
	latency time.Duration

	mu                                          sync.Mutex
	timeouts                                    int
	lose                                        bool
	creates, patches, deletes, status, conflict int
	complete                                    time.Time
}

var _ reconcile.Client = (*latencyClient)(nil)

func (l *latencyClient) wait() {
	time.Sleep(l.latency)
	l.clk.SetTime(time.Now())
}

func (l *latencyClient) count(n *int, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	*n++
	if apierrors.IsConflict(err) {
		l.conflict++
	}
}

func (l *latencyClient) CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	l.wait()
	l.mu.Lock()
	timeout := l.timeouts > 0
	if timeout {
		l.timeouts--
	}
	l.mu.Unlock()
	if timeout && l.lose {
		l.count(&l.creates, TimeoutError())
		return nil, TimeoutError()
	}
	out, err := l.c.CreatePod(ctx, pod)
	l.count(&l.creates, err)
	if err == nil {
		k := l.c.Kubelet()
		if err := k.Run(out.Namespace, out.Name); err != nil {
			return out, fmt.Errorf("latency kubelet: %w", err)
		}
		if err := k.Succeed(out.Namespace, out.Name); err != nil {
			return out, fmt.Errorf("latency kubelet: %w", err)
		}
	}
	if timeout {
		return nil, TimeoutError()
	}
	return out, err
}

func (l *latencyClient) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	l.wait()
	err := l.c.DeletePod(ctx, namespace, name, uid)
	l.count(&l.deletes, err)
	return err
}

func (l *latencyClient) PatchPod(ctx context.Context, namespace, name string, pt types.PatchType, data []byte) (*corev1.Pod, error) {
	l.wait()
	out, err := l.c.PatchPod(ctx, namespace, name, pt, data)
	l.count(&l.patches, err)
	return out, err
}

// GetPod is a read: delayed like the writes, not counted among them.
func (l *latencyClient) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	l.wait()
	return l.c.GetPod(ctx, namespace, name)
}

func (l *latencyClient) UpdateJobStatus(ctx context.Context, job *batchv1.Job) (*batchv1.Job, error) {
	l.wait()
	out, err := l.c.UpdateJobStatus(ctx, job)
	l.count(&l.status, err)
	if err == nil && jobstatus.IsConditionTrue(out.Status.Conditions, batchv1.JobComplete) {
		l.mu.Lock()
		if l.complete.IsZero() {
			l.complete = time.Now()
		}
		l.mu.Unlock()
	}
	return out, err
}

func (l *latencyClient) completedAt(fallback time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.complete.IsZero() {
		return fallback
	}
	return l.complete
}

type callCounts struct{ creates, patches, deletes, status int }

func (l *latencyClient) snapshot() callCounts {
	l.mu.Lock()
	defer l.mu.Unlock()
	return callCounts{l.creates, l.patches, l.deletes, l.status}
}

func (l *latencyClient) fill(r *LatencyResult) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r.Creates, r.Patches, r.Deletes, r.StatusWrites, r.Conflicts = l.creates, l.patches, l.deletes, l.status, l.conflict
	r.Writes = l.creates + l.patches + l.deletes + l.status
}

// latencyQueue is a one-worker work queue with delayed adds, with client-go's
// semantics: a key is queued once (the earliest time wins); a key added while its
// sync runs is synced again after.
type latencyQueue struct {
	mu         sync.Mutex
	due        map[string]time.Time
	processing map[string]bool
	changed    chan struct{}
}

func newLatencyQueue() *latencyQueue {
	return &latencyQueue{due: map[string]time.Time{}, processing: map[string]bool{}, changed: make(chan struct{}, 1)}
}

func (q *latencyQueue) add(key string, after time.Duration) {
	q.mu.Lock()
	at := time.Now().Add(after)
	if cur, ok := q.due[key]; !ok || at.Before(cur) {
		q.due[key] = at
	}
	q.mu.Unlock()
	select {
	case q.changed <- struct{}{}:
	default:
	}
}

// addAfterDone queues key after the sync that runs it; the same as add here, where
// the one worker is the caller.
func (q *latencyQueue) addAfterDone(key string, after time.Duration) { q.add(key, after) }

func (q *latencyQueue) done(key string) {
	q.mu.Lock()
	delete(q.processing, key)
	q.mu.Unlock()
}

// get waits for the earliest due key that is not being processed.
func (q *latencyQueue) get(ctx context.Context) (string, bool) {
	for {
		q.mu.Lock()
		now := time.Now()
		var best string
		var bestAt time.Time
		for k, at := range q.due {
			if q.processing[k] {
				continue
			}
			if best == "" || at.Before(bestAt) {
				best, bestAt = k, at
			}
		}
		if best != "" && !bestAt.After(now) {
			delete(q.due, best)
			q.processing[best] = true
			q.mu.Unlock()
			return best, true
		}
		q.mu.Unlock()
		var timer <-chan time.Time
		if best != "" {
			timer = time.After(bestAt.Sub(now))
		}
		select {
		case <-ctx.Done():
			return "", false
		case <-q.changed:
		case <-timer:
		}
	}
}
