package reconcile

// What the Reconciler remembers of its creations between syncs: creations of
// unknown outcome, and the names of pods that are not the owner's.

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// refusal is what the Reconciler knows of a name a creation was refused under
// (AlreadyExists) and that no pod of the owner holds.
type refusal struct {
	// at is when the name was first refused.
	at time.Time
	// other says that a live read found the name held by a pod that is not the
	// owner's (released, another owner's, foreign): the name is taken from then
	// on. Without it (the read failed), the name counts as taken once no event has
	// brought a pod of the owner under it for UncertainCreationTimeout.
	other bool
}

// maxRefusedNames bounds keyState.refused: the oldest entries go first. Forgetting
// a name costs a refused creation and a read, never a second pod: the creation
// walks the same sequence of names again (indexes.NextPodName).
const maxRefusedNames = 256

// noteUncertainCreate remembers a creation of the Job under key whose outcome is
// unknown.
func (r *Reconciler) noteUncertainCreate(key string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stateLocked(key)
	s.uncertainCreates = append(s.uncertainCreates, at)
}

// expireUncertainCreates drops from the expectations of key the creations of unknown
// outcome sent UncertainCreationTimeout ago or more, and returns how long until the
// next one expires (0 when none is left).
func (r *Reconciler) expireUncertainCreates(key string, now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.keys[key]
	if s == nil || len(s.uncertainCreates) == 0 {
		return 0
	}
	timeout := r.cfg.UncertainCreationTimeout
	kept := s.uncertainCreates[:0]
	for _, at := range s.uncertainCreates {
		if now.Sub(at) >= timeout {
			if !r.cfg.Expectations.Satisfied(key) {
				r.cfg.Expectations.CreationObserved(key)
			}
			continue
		}
		kept = append(kept, at)
	}
	if len(kept) == 0 {
		s.uncertainCreates = nil
		return 0
	}
	s.uncertainCreates = kept
	return kept[0].Add(timeout).Sub(now)
}

// noteRefusedName remembers that a creation under name was answered AlreadyExists
// and that the pod holding it is not the owner's (other), or that the read which
// would have told failed.
func (r *Reconciler) noteRefusedName(key, name string, at time.Time, other bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stateLocked(key)
	if old, ok := s.refused[name]; ok {
		old.other = old.other || other
		s.refused[name] = old
		return
	}
	if s.refused == nil {
		s.refused = map[string]refusal{}
	}
	if len(s.refused) >= maxRefusedNames {
		oldest := ""
		for n, f := range s.refused {
			if o := s.refused[oldest]; oldest == "" || f.at.Before(o.at) || (f.at.Equal(o.at) && n < oldest) {
				oldest = n
			}
		}
		delete(s.refused, oldest)
	}
	s.refused[name] = refusal{at: at, other: other}
}

// isTaken says whether name is known to be held by a pod that is not the owner's
// (a live read said so).
func (r *Reconciler) isTaken(key, name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.keys[key]
	return s != nil && s.refused[name].other
}

// takenNames forgets the refused names of key that a listed pod has (the owner's own
// pod, or an orphan it adopts), and returns the others that are taken: those a live
// read found held by a pod that is not the owner's, and those refused
// UncertainCreationTimeout ago or more when the read failed (no event brought a pod
// of the owner under that name). Nil when none.
func (r *Reconciler) takenNames(key string, pods []*corev1.Pod, now time.Time) sets.Set[string] {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.keys[key]
	if s == nil || len(s.refused) == 0 {
		return nil
	}
	for _, p := range pods {
		if p != nil {
			delete(s.refused, p.Name)
		}
	}
	var out sets.Set[string]
	for name, f := range s.refused {
		if f.other || now.Sub(f.at) >= r.cfg.UncertainCreationTimeout {
			if out == nil {
				out = sets.New[string]()
			}
			out.Insert(name)
		}
	}
	return out
}
