package sim

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// rolesScaleStream is the PCG stream that draws, per roles seed, the size
// changes of its workers: the other draws of a seed stay as they were.
const rolesScaleStream = shapeStream + 1

// rolesScale is the size changes a roles seed makes on its running owner, as
// a user's update of an elastic role: the workers' parallelism =
// completions.
type rolesScale struct {
	// changes maps a chaotic step to the workers' new pod count.
	changes map[int]int32
	// applied counts the changes made on the running owner; size is the
	// workers' last pod count.
	applied int
	size    int32
}

// drawRolesScale draws the size changes of seed's owner: one seed in two
// changes its workers' pod count once or twice in the first chaotic steps,
// to 1 to 5.
func drawRolesScale(seed uint64) *rolesScale {
	r := rand.New(rand.NewPCG(seed, rolesScaleStream))
	x := &rolesScale{changes: map[int]int32{}}
	if r.IntN(2) == 0 {
		for range 1 + r.IntN(2) {
			x.changes[1+r.IntN(8)] = 1 + r.Int32N(5)
		}
	}
	return x
}

// resize applies the change drawn for chaotic step n to the workers (the
// owner's first role), unless the owner has finished (the API refuses a
// change then).
func (x *rolesScale) resize(n int, store *reconciletest.Store[*reconciletest.Run], ns, name string) {
	size, ok := x.changes[n]
	if !ok {
		return
	}
	_, _ = store.Update(ns, name, func(r *reconciletest.Run) {
		if r.Status.TerminalState != "" {
			return
		}
		x.applied++
		x.size = size
		s := &r.Spec.Roles[0].Spec
		s.Parallelism, s.Completions = ptr.To(size), ptr.To(size)
	})
}

// describe says what the owner went through, "" when it was not resized.
func (x *rolesScale) describe() string {
	if x.applied == 0 {
		return ""
	}
	return fmt.Sprintf(" resized %d times while running, to %d workers", x.applied, x.size)
}

// markLeaving notes the workers whose index is at or above the workers'
// size as the owner now says it.
func (m *rolesModel) markLeaving() {
	w, err := m.rw.owners.Get(m.rw.ns, m.rw.name)
	if err != nil {
		return
	}
	size := ptr.Deref(w.Spec.Roles[0].Spec.Completions, 1)
	m.sizes = map[string]int32{w.Spec.Roles[0].Name: size}
	for uid, p := range m.pods {
		if p.Labels[plaingroup.LabelRoleName] != w.Spec.Roles[0].Name {
			continue
		}
		if x, err := strconv.Atoi(p.Annotations[batchv1.JobCompletionIndexAnnotation]); err == nil && int32(x) >= size {
			m.leaving[uid] = true
		}
	}
}

// size returns the pod count of role name as the owner last said it, for
// the workers (the role resized).
func (m *rolesModel) size(name string) (int32, bool) {
	n, ok := m.sizes[name]
	return n, ok
}
