package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/jobkit/jobkit/internal/podutil"
	"github.com/jobkit/jobkit/owner"
)

// podRecord is what the watch saw of one pod over its life.
type podRecord struct {
	Name  string
	Owner types.UID // its controller's UID
	Index int       // batch.kubernetes.io/job-completion-index; -1 without one
	// CreatedRV is the resourceVersion of its ADDED event: its creation, in the order
	// of etcd's revisions; 0 when the watch did not see it being created.
	CreatedRV uint64
	// Decided: the watch has seen the first version of the pod that is finished
	// (Succeeded, Failed) or being deleted; Counted: that version still held the
	// tracking finalizer, so its Job's counters must include it, as Succeeded when it
	// had succeeded and as Failed otherwise (a pod deleted while running counts as
	// failed; one whose finalizer the controller removed first, as for a suspension,
	// counts as neither).
	Decided, Counted, Succeeded bool
	Phase                       corev1.PodPhase // the last version's
	EverSucceeded               bool
	Finalizer                   bool // the last version holds the tracking finalizer
	Gone                        bool // deleted from the API
	LastRV                      string
}

// jobRecord is what the watch saw of one Job.
type jobRecord struct {
	Name string
	// FinishedRV is the resourceVersion of the first version with a finished condition
	// (Complete or Failed True); 0 while none was seen.
	FinishedRV uint64
	Gone       bool
}

// history records pods and Jobs from watch events; safe for concurrent use.
type history struct {
	mu   sync.Mutex
	pods map[types.UID]*podRecord
	jobs map[types.UID]*jobRecord
	// gaps are the problems of the watches themselves (an event that could not be
	// read); a gap makes the counters of the history unreliable.
	gaps []string
}

func newHistory() *history {
	return &history{pods: map[types.UID]*podRecord{}, jobs: map[types.UID]*jobRecord{}}
}

func parseRV(s string) uint64 {
	v, _ := strconv.ParseUint(s, 10, 64)
	return v
}

func hasTrackingFinalizer(p *corev1.Pod) bool {
	return owner.BatchJob.HasFinalizer(p)
}

// observePod records one watch event of a pod.
func (h *history) observePod(typ watch.EventType, p *corev1.Pod) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.pods[p.UID]
	if r == nil {
		r = &podRecord{Name: p.Name, Index: -1}
		for _, ref := range p.OwnerReferences {
			if ref.Controller != nil && *ref.Controller {
				r.Owner = ref.UID
			}
		}
		if s, ok := p.Annotations[batchv1.JobCompletionIndexAnnotation]; ok {
			if i, err := strconv.Atoi(s); err == nil {
				r.Index = i
			}
		}
		if typ == watch.Added {
			r.CreatedRV = parseRV(p.ResourceVersion)
		}
		h.pods[p.UID] = r
	}
	r.LastRV = p.ResourceVersion
	r.Phase = p.Status.Phase
	r.Finalizer = hasTrackingFinalizer(p)
	r.EverSucceeded = r.EverSucceeded || p.Status.Phase == corev1.PodSucceeded
	r.Gone = r.Gone || typ == watch.Deleted
	finished := podutil.IsTerminal(p) || p.DeletionTimestamp != nil
	if !r.Decided && finished {
		r.Decided, r.Counted, r.Succeeded = true, r.Finalizer, p.Status.Phase == corev1.PodSucceeded
	}
}

// resyncPods takes in a fresh list of the pods after the watch lost its place. A pod
// whose version is not the last one seen had changes the watch missed; they matter
// only when the pod is now finished or being deleted and the first such version was
// not seen: with the tracking finalizer still on, it was on then too (the finalizer
// is never added back), so the pod counts; without it, whether the controller had
// removed it before or after is unknown, and the history has a gap. A pod gone from
// the list was deleted: unknown too if its decisive version was missed.
func (h *history) resyncPods(pods []corev1.Pod) {
	listed := map[types.UID]bool{}
	for i := range pods {
		p := &pods[i]
		listed[p.UID] = true
		h.mu.Lock()
		r := h.pods[p.UID]
		seen := r != nil && r.LastRV == p.ResourceVersion
		undecided := r == nil || !r.Decided
		h.mu.Unlock()
		if seen {
			continue
		}
		h.observePod(watch.Modified, p)
		finished := podutil.IsTerminal(p) || p.DeletionTimestamp != nil
		if undecided && finished && !hasTrackingFinalizer(p) {
			h.gap("pod %s: finished or deleted without the tracking finalizer while the watch was away: counted or not is unknown", p.Name)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for uid, r := range h.pods {
		if !listed[uid] && !r.Gone {
			r.Gone = true
			if !r.Decided {
				h.gaps = append(h.gaps, fmt.Sprintf("pod %s: deleted while the watch was away: counted or not is unknown", r.Name))
			}
		}
	}
}

// resyncJobs takes in a fresh list of the Jobs after the watch lost its place: a
// Job that finished meanwhile gets the listed version as its finish (later than the
// true one, so the check of pods created after it is weaker for that Job).
func (h *history) resyncJobs(jobs []batchv1.Job) {
	listed := map[types.UID]bool{}
	for i := range jobs {
		listed[jobs[i].UID] = true
		h.observeJob(watch.Modified, &jobs[i])
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for uid, r := range h.jobs {
		if !listed[uid] {
			r.Gone = true
		}
	}
}

// observeJob records one watch event of a Job.
func (h *history) observeJob(typ watch.EventType, j *batchv1.Job) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.jobs[j.UID]
	if r == nil {
		r = &jobRecord{Name: j.Name}
		h.jobs[j.UID] = r
	}
	if r.FinishedRV == 0 && isFinished(j) {
		r.FinishedRV = parseRV(j.ResourceVersion)
	}
	r.Gone = r.Gone || typ == watch.Deleted
}

// gap records a problem of a watch.
func (h *history) gap(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gaps = append(h.gaps, fmt.Sprintf(format, args...))
}

// podsOf are the records of the pods whose controller is the Job uid, by name.
func (h *history) podsOf(uid types.UID) []podRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []podRecord
	for _, r := range h.pods {
		if r.Owner == uid {
			out = append(out, *r)
		}
	}
	slices.SortFunc(out, func(a, b podRecord) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func (h *history) createdCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.pods)
}

// counts are a Job's counters as its pods' history says they must be.
type counts struct {
	Succeeded, Failed int32
	CompletedIndexes  string // Indexed only
}

// expectedCounts derives the counters of a Job from the records of its pods: every
// counted pod once, an Indexed Job's succeeded pods once per index below completions.
func expectedCounts(pods []podRecord, indexed bool, completions int32) counts {
	var c counts
	done := map[int]bool{}
	for _, p := range pods {
		if !p.Counted {
			continue
		}
		switch {
		case !p.Succeeded:
			c.Failed++
		case !indexed:
			c.Succeeded++
		case p.Index >= 0 && p.Index < int(completions):
			done[p.Index] = true
		}
	}
	if indexed {
		c.Succeeded = int32(len(done))
		c.CompletedIndexes = formatIndexes(done)
	}
	return c
}

// formatIndexes writes a set of indexes as status.completedIndexes does: "1,3-5,7,8".
func formatIndexes(set map[int]bool) string {
	var idx []int
	for i := range set {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	var parts []string
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		switch j - i {
		case 0:
			parts = append(parts, strconv.Itoa(idx[i]))
		case 1: // two in a row are written as two, not as a range
			parts = append(parts, strconv.Itoa(idx[i]), strconv.Itoa(idx[j]))
		default:
			parts = append(parts, fmt.Sprintf("%d-%d", idx[i], idx[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// checkJobPods checks the history of one Job's pods against the Job's final state:
// no index with two succeeded pods, no pod created after the Job finished (or, for
// a Job the driver deleted, after it was gone: finishedRV is then the deletion's).
func checkJobPods(name string, pods []podRecord, indexed bool, finishedRV uint64) []string {
	var problems []string
	perIndex := map[int][]string{}
	for _, p := range pods {
		if indexed && p.EverSucceeded {
			perIndex[p.Index] = append(perIndex[p.Index], p.Name)
		}
		if finishedRV != 0 && p.CreatedRV > finishedRV {
			problems = append(problems, fmt.Sprintf("%s: pod %s created (resourceVersion %d) after the Job finished (%d)", name, p.Name, p.CreatedRV, finishedRV))
		}
	}
	var dup []int
	for i, names := range perIndex {
		if len(names) > 1 {
			dup = append(dup, i)
		}
	}
	slices.Sort(dup)
	for _, i := range dup {
		problems = append(problems, fmt.Sprintf("%s: index %d has %d succeeded pods: %v", name, i, len(perIndex[i]), perIndex[i]))
	}
	return problems
}
