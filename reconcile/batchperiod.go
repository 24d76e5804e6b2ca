package reconcile

import "time"

// The batch period of an owner's events, grown with its size
// (Config.PodEventBatchPods).

// notePods remembers that the sync of key listed n pods.
func (r *Reconciler) notePods(key string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stateLocked(key).pods = n
}

// batchPeriod is how long the events of key that observe no creation or deletion
// are batched: Config.PodEventBatchPeriod, grown in proportion to the pods the last
// sync of key listed beyond Config.PodEventBatchPods, at most maxBatchPeriodFactor
// times. A key never synced, or a negative PodEventBatchPods, keeps the period.
func (r *Reconciler) batchPeriod(key string) time.Duration {
	base, per := r.cfg.PodEventBatchPeriod, r.cfg.PodEventBatchPods
	if per <= 0 {
		return base
	}
	r.mu.Lock()
	n := 0
	if s := r.keys[key]; s != nil {
		n = s.pods
	}
	r.mu.Unlock()
	return grownPeriod(base, n, per)
}

// grownPeriod is base × n / per when that is longer than base, at most
// maxBatchPeriodFactor × base.
func grownPeriod(base time.Duration, n, per int) time.Duration {
	if n <= per {
		return base
	}
	if n >= maxBatchPeriodFactor*per {
		return maxBatchPeriodFactor * base
	}
	return time.Duration(int64(base) * int64(n) / int64(per))
}
