package reconcile

// The one body of every sync, whatever the owner's shape (Sync, SyncRoles,
// SyncChildJobs): the owner's UID noted, a cache older than the last status
// write handled, then the shape's own decision and execution, and the sync's
// metrics.

import (
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
)

// ownerSync is one sync of an owner of some shape, as the common body sees it.
type ownerSync interface {
	// ownerUID and ownerVersion are the UID and resourceVersion of the owner as
	// read from the caller's cache.
	ownerUID() types.UID
	ownerVersion() string
	// useWritten makes the sync plan from the owner the last status write under
	// its key returned (the cache has not caught up with it), and reports false
	// when that write is not of this shape or not of this owner (same UID): the
	// sync then waits for the cache.
	useWritten(last written) bool
	// decide plans the sync at now and executes it.
	decide(now time.Time) (Result, error)
	// labels are the mode and action labels of the sync's metrics, read once the
	// sync is over.
	labels() (mode, action string)
}

// syncOwner runs s, the sync of the owner under key: the one body of Sync,
// SyncRoles and SyncChildJobs. It notes the owner's UID (forgetting the key's
// state when the owner was recreated under its name); when the cached owner is
// older than the last status write under the key, it plans from the owner that
// write returned, or skips the sync (RequeueAfter Config.StaleCacheRequeue) when
// that owner is another one or of another shape; then s decides and executes.
// The sync's duration and result go to Metrics.JobSync.
func (r *Reconciler) syncOwner(key string, log logr.Logger, s ownerSync) (Result, error) {
	start := r.cfg.Clock.Now()
	res, err := r.syncOwnerAt(key, log, s, start)
	result := labelSuccess
	if err != nil {
		result = labelError
	}
	mode, action := s.labels()
	r.cfg.Metrics.JobSync(mode, result, action, r.cfg.Clock.Since(start))
	return res, err
}

func (r *Reconciler) syncOwnerAt(key string, log logr.Logger, s ownerSync, now time.Time) (Result, error) {
	r.noteUID(key, s.ownerUID())
	if stale, last := r.stale(key, s.ownerVersion()); stale {
		if !s.useWritten(last) {
			r.cfg.Metrics.StaleSyncSkipped()
			log.V(2).Info("Cached owner is older than the last status write; waiting for the cache", "resourceVersion", s.ownerVersion())
			return Result{RequeueAfter: r.cfg.StaleCacheRequeue, Report: Report{Skipped: "cache older than the last status write"}}, nil
		}
		// The owner this reconciler wrote last is newer than the cached one, spec
		// included (a write returns the whole object): sync from it rather than
		// wait one event lag for the cache to show it.
		log.V(4).Info("Cached owner is older than the last status write; syncing the owner as written", "resourceVersion", s.ownerVersion())
	}
	return s.decide(now)
}
