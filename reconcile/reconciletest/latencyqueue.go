package reconciletest

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// latencyQueue is the work queue of the latency runs, with client-go's semantics
// for any number of workers: a key is queued once (the earliest time wins); a key
// is handed to one worker at a time; a key added while a worker syncs it is
// queued when that sync is done. The keys wait in a heap by due time (ties in the
// order they were queued), so an add and a get cost O(log keys) with 10,000 Jobs.
type latencyQueue struct {
	mu         sync.Mutex
	keys       latencyHeap
	queued     map[string]*latencyItem
	processing map[string]bool
	// dirty holds the keys added while they were processing, with their due time.
	dirty   map[string]time.Time
	seq     uint64
	changed chan struct{}
}

type latencyItem struct {
	key   string
	at    time.Time
	seq   uint64
	index int
}

// latencyHeap is a container/heap of the queued keys, earliest due first.
type latencyHeap []*latencyItem

func (h latencyHeap) Len() int { return len(h) }
func (h latencyHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h latencyHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *latencyHeap) Push(x any) {
	it := x.(*latencyItem)
	it.index = len(*h)
	*h = append(*h, it)
}
func (h *latencyHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return it
}

func newLatencyQueue() *latencyQueue {
	return &latencyQueue{queued: map[string]*latencyItem{}, processing: map[string]bool{},
		dirty: map[string]time.Time{}, changed: make(chan struct{}, 1)}
}

// add queues key to be due after the given delay.
func (q *latencyQueue) add(key string, after time.Duration) {
	q.mu.Lock()
	q.queueLocked(key, time.Now().Add(after))
	q.mu.Unlock()
	q.wake()
}

func (q *latencyQueue) queueLocked(key string, at time.Time) {
	if q.processing[key] {
		if cur, ok := q.dirty[key]; !ok || at.Before(cur) {
			q.dirty[key] = at
		}
		return
	}
	if it, ok := q.queued[key]; ok {
		if at.Before(it.at) {
			it.at = at
			heap.Fix(&q.keys, it.index)
		}
		return
	}
	q.seq++
	it := &latencyItem{key: key, at: at, seq: q.seq}
	q.queued[key] = it
	heap.Push(&q.keys, it)
}

// wake tells a waiting worker that the queue changed.
func (q *latencyQueue) wake() {
	select {
	case q.changed <- struct{}{}:
	default:
	}
}

// addAfterDone queues key after the sync that runs it, as a rate-limited add by
// the worker does: the key is processing, so it is queued when done.
func (q *latencyQueue) addAfterDone(key string, after time.Duration) { q.add(key, after) }

// done ends the processing of key, queueing it if it was added meanwhile.
func (q *latencyQueue) done(key string) {
	q.mu.Lock()
	delete(q.processing, key)
	at, dirty := q.dirty[key]
	if dirty {
		delete(q.dirty, key)
		q.queueLocked(key, at)
	}
	q.mu.Unlock()
	if dirty {
		q.wake()
	}
}

// dueBefore reports whether a key is queued, or waits for its sync to end, due
// before t.
func (q *latencyQueue) dueBefore(t time.Time) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.keys) > 0 && q.keys[0].at.Before(t) {
		return true
	}
	for _, at := range q.dirty {
		if at.Before(t) {
			return true
		}
	}
	return false
}

// get waits for the earliest due key and marks it processing; false when ctx
// ends first.
func (q *latencyQueue) get(ctx context.Context) (string, bool) {
	for {
		q.mu.Lock()
		now := time.Now()
		var next time.Time
		if len(q.keys) > 0 {
			it := q.keys[0]
			if !it.at.After(now) {
				heap.Pop(&q.keys)
				delete(q.queued, it.key)
				q.processing[it.key] = true
				more := len(q.keys) > 0
				q.mu.Unlock()
				if more {
					q.wake() // another worker may take the next key
				}
				return it.key, true
			}
			next = it.at
		}
		q.mu.Unlock()
		var timer <-chan time.Time
		if !next.IsZero() {
			timer = time.After(next.Sub(now))
		}
		select {
		case <-ctx.Done():
			return "", false
		case <-q.changed:
		case <-timer:
		}
	}
}
