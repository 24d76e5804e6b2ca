package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
)

// Tables for decisions 5 to 8 of issue 3: how many pods the Job wants, which it
// deletes, which it creates, and suspension.

type tbD5Case struct {
	name       string
	in         Input
	wantCreate int
	wantDelete int
	wantActive int32 // status.active after the plan
}

func (c tbD5Case) input() tbInputCase { return tbInputCase{c.name, c.in} }

func tbD5Cases() []tbD5Case {
	succeeded := func(n int32) func(*batchv1.Job) {
		return tbStatus(func(s *batchv1.JobStatus) { s.Succeeded = n })
	}
	return []tbD5Case{
		{
			name:       "parallelism caps the remaining completions",
			in:         tbInput(tbJob(tbSize(5, 2))),
			wantCreate: 2, wantActive: 2,
		},
		{
			name:       "remaining completions cap parallelism",
			in:         tbInput(tbJob(tbSize(5, 3), succeeded(3))),
			wantCreate: 2, wantActive: 2,
		},
		{
			name:       "more active pods than remaining completions",
			in:         tbInput(tbJob(tbSize(5, 3), succeeded(4)), tbPods("p", 2)...),
			wantDelete: 1, wantActive: 1,
		},
		{
			name:       "more successes than completions clamps to zero",
			in:         tbInput(tbJob(tbSize(2, 2), succeeded(3)), tbPod("p")),
			wantDelete: 1, wantActive: 0,
		},
		{
			name:       "without completions and no success: parallelism",
			in:         tbInput(tbJob(tbNoCompletions, tbParallelism(3)), tbPod("p")),
			wantCreate: 2, wantActive: 3,
		},
		{
			name:       "without completions after a success: the active pods stay as they are",
			in:         tbInput(tbJob(tbNoCompletions, tbParallelism(3), succeeded(1)), tbPod("p")),
			wantActive: 1,
		},
		{
			name:       "parallelism 0 removes every active pod",
			in:         tbInput(tbJob(tbSize(5, 0)), tbPods("p", 2)...),
			wantDelete: 2, wantActive: 0,
		},
		{
			name:       "terminating pods occupy a slot under podReplacementPolicy Failed",
			in:         tbInput(tbJob(tbSize(3, 2), tbReplaceFailed), tbPod("a"), tbPod("t", tbDeleted)),
			wantActive: 1,
		},
		{
			name:       "terminating pods free their slot under TerminatingOrFailed",
			in:         tbInput(tbJob(tbSize(3, 2)), tbPod("a"), tbPod("t", tbDeleted)),
			wantCreate: 1, wantActive: 2,
		},
		{
			name:       "terminating pods are never deleted to make room",
			in:         tbInput(tbJob(tbSize(3, 1), tbReplaceFailed), tbPod("a"), tbPod("t1", tbDeleted), tbPod("t2", tbDeleted)),
			wantActive: 1,
		},
		{
			name:       "while the job-wide backoff holds creations back, active stays the real count",
			in:         tbInput(tbJob(tbSize(3, 2)), tbPod("a", tbReady), tbPod("f", tbFailedAgo(3*time.Second))),
			wantActive: 1,
		},
		{
			name: "Indexed: completed indexes count as succeeded",
			in: tbInput(tbJob(tbIndexed, tbSize(4, 4), tbStatus(func(s *batchv1.JobStatus) { s.CompletedIndexes, s.Succeeded = "0,2", 2 })),
				tbPod("p-3", tbIx(3))),
			wantCreate: 1, wantActive: 2,
		},
	}
}

func TestDecision5_WantActive(t *testing.T) {
	for _, tc := range tbD5Cases() {
		t.Run(tc.name, func(t *testing.T) {
			p := tbCompute(t, tc.in)
			assert.Len(t, p.Create, tc.wantCreate, "Compute(in).Create\nplan:\n%s", p)
			assert.Len(t, p.Delete, tc.wantDelete, "Compute(in).Delete\nplan:\n%s", p)
			assert.Equal(t, tc.wantActive, p.Status.Active, "Status.Active")
		})
	}
}

type tbD6Case struct {
	name              string
	in                Input
	wantDelete        []string // in order; nil with wantDeleteN
	wantDeleteN       int      // checked when wantDelete is nil
	wantFinalizerFrst bool
	wantReasons       []string // checked when not nil
}

func (c tbD6Case) input() tbInputCase { return tbInputCase{c.name, c.in} }

func tbD6Cases() []tbD6Case {
	many := tbPods("p", 600)
	return []tbD6Case{
		{
			name: "Indexed: pods without index, duplicates and out-of-range pods first, then removal order",
			in: tbInput(tbJob(tbIndexed, tbSize(3, 1)),
				tbPod("p-1", tbIx(1), tbReadySince(tbAgo(30*time.Minute))),
				tbPod("dup-a", tbIx(0), tbReady),
				tbPod("p-5", tbIx(5)),
				tbPod("x"),
				tbPod("dup-b", tbIx(0))),
			wantDelete:        []string{"x", "dup-b", "p-5", "dup-a"},
			wantFinalizerFrst: true,
			wantReasons:       []string{"no valid completion index", "duplicate pod for index 0", "index 5 at or above completions", "too many active pods"},
		},
		{
			name: "Indexed: strays go even when no scale-down is needed, and nothing is created",
			in: tbInput(tbJob(tbIndexed, tbSize(3, 3)),
				tbPod("p-0"+"", tbIx(0)), tbPod("p-0b", tbIx(0), tbCreatedAt(tbAgo(time.Minute))), tbPod("p-7", tbIx(7))),
			wantDelete:        []string{"p-0b", "p-7"},
			wantFinalizerFrst: true,
		},
		{
			name: "NonIndexed: upstream removal order",
			in: tbInput(tbJob(tbSize(8, 0)),
				tbPod("ready-long", tbReadySince(tbAgo(30*time.Minute))),
				tbPod("old", tbCreatedAt(tbAgo(20*time.Minute))),
				tbPod("ready-recent", tbReadySince(tbAgo(time.Minute))),
				tbPod("restarts", tbRestarts(3)),
				tbPod("unknown", tbPhase(corev1.PodUnknown)),
				tbPod("new", tbCreatedAt(tbAgo(time.Minute))),
				tbPod("pending", tbPending),
				tbPod("unscheduled", tbPending, tbUnscheduled)),
			wantDelete:        []string{"unscheduled", "pending", "unknown", "restarts", "new", "old", "ready-recent", "ready-long"},
			wantFinalizerFrst: true,
		},
		{
			name:              "at most 500 deletions per sync",
			in:                tbInput(tbJob(tbSize(600, 0)), many...),
			wantDeleteN:       500,
			wantFinalizerFrst: true,
		},
		{
			name: "the deletion cap is configurable",
			in: tbWithInput(tbInput(tbJob(tbSize(3, 0)), tbPod("a", tbReady), tbPod("b", tbPending), tbPod("c")),
				func(in *Input) { in.Options.MaxDeletesPerSync = 2 }),
			wantDelete:        []string{"b", "c"},
			wantFinalizerFrst: true,
		},
		{
			name: "suspension deletions are capped too",
			in: tbWithInput(tbInput(tbJob(tbSize(3, 3), tbSuspend), tbPod("a", tbReady), tbPod("b", tbPending), tbPod("c")),
				func(in *Input) { in.Options.MaxDeletesPerSync = 2 }),
			wantDelete:        []string{"b", "c"},
			wantFinalizerFrst: true,
			wantReasons:       []string{"job suspended", "job suspended"},
		},
		{
			name:        "a finishing Job only deletes, keeping the finalizer for counting",
			in:          tbInput(tbJob(tbBackoffLimit(0), tbSize(3, 2)), tbPod("f", tbFailed), tbPod("r")),
			wantDelete:  []string{"r"},
			wantReasons: []string{"job finishing: BackoffLimitExceeded"},
		},
		{
			name: "unsatisfied expectations: no deletion",
			in: tbWithInput(tbInput(tbJob(tbSize(3, 0)), tbPods("p", 2)...),
				func(in *Input) { in.ExpectationsSatisfied = false }),
			wantDelete: []string{},
		},
	}
}

func TestDecision6_Deletions(t *testing.T) {
	for _, tc := range tbD6Cases() {
		t.Run(tc.name, func(t *testing.T) {
			p := tbCompute(t, tc.in)
			assert.Empty(t, p.Create, "Compute(in).Create")
			if tc.wantDelete != nil {
				if diff := cmp.Diff(tc.wantDelete, tbDeleteNames(p.Delete), tbEmptyEqual); diff != "" {
					t.Errorf("Compute(in).Delete (-want +got):\n%s", diff)
				}
			} else {
				assert.Len(t, p.Delete, tc.wantDeleteN, "Compute(in).Delete")
			}
			for _, d := range p.Delete {
				assert.Equal(t, tc.wantFinalizerFrst, d.RemoveFinalizerFirst, "RemoveFinalizerFirst of %s", d.Pod.Name)
				assert.NotEmpty(t, d.Reason, "reason of the deletion of %s", d.Pod.Name)
			}
			if tc.wantReasons != nil {
				var got []string
				for _, d := range p.Delete {
					got = append(got, d.Reason)
				}
				assert.Equal(t, tc.wantReasons, got, "deletion reasons")
			}
			if tc.wantFinalizerFrst {
				// A pod deleted without being counted keeps out of the ledger.
				removed := map[string]bool{}
				for _, a := range p.RemoveFinalizers {
					removed[a.Pod.Name] = true
				}
				for _, d := range p.Delete {
					assert.False(t, removed[d.Pod.Name], "%s is both deleted without counting and in RemoveFinalizers", d.Pod.Name)
				}
			}
		})
	}
}

type tbD7Case struct {
	name        string
	in          Input
	wantIndexes []int // index of each creation; -1 for NonIndexed
	wantRequeue time.Duration
	check       func(t *testing.T, p *Plan)
}

func (c tbD7Case) input() tbInputCase { return tbInputCase{c.name, c.in} }

func tbMinus1s(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = -1
	}
	return out
}

func tbD7Cases() []tbD7Case {
	ignoreDisruption := tbConditionRule(batchv1.PodFailurePolicyActionIgnore, corev1.DisruptionTarget)
	failureCounts := func(t *testing.T, p *Plan, ix int, failed, ignored string) {
		t.Helper()
		for _, c := range p.Create {
			if c.Index != ix {
				continue
			}
			a := c.Pod.Annotations
			assert.Equal(t, failed, a[batchv1.JobIndexFailureCountAnnotation], "failure count of the pod of index %d", ix)
			v, ok := a[batchv1.JobIndexIgnoredFailureCountAnnotation]
			if ignored == "" {
				assert.False(t, ok, "ignored failure count of the pod of index %d is set: %q", ix, v)
			} else {
				assert.Equal(t, ignored, v, "ignored failure count of the pod of index %d", ix)
			}
			return
		}
		t.Errorf("no creation for index %d", ix)
	}
	return []tbD7Case{
		{
			name:        "NonIndexed: pods from the template with the finalizer and the owner reference",
			in:          tbInput(tbJob(tbSize(5, 2), tbNotStarted)),
			wantIndexes: []int{-1, -1},
			check: func(t *testing.T, p *Plan) {
				job := tbJob()
				want := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{
						Namespace:    "ns",
						GenerateName: "job-",
						Labels:       tbLabels(),
						Finalizers:   []string{batchv1.JobTrackingFinalizer},
						OwnerReferences: []metav1.OwnerReference{{
							APIVersion: "batch/v1", Kind: "Job", Name: "job", UID: tbJobUID,
							Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
						}},
					},
					Spec: job.Spec.Template.Spec,
				}
				for _, c := range p.Create {
					if diff := cmp.Diff(want, c.Pod); diff != "" {
						t.Errorf("created pod (-want +got):\n%s", diff)
					}
					assert.NotEmpty(t, c.Reason, "creation reason")
				}
			},
		},
		{
			name: "the template's finalizers are kept and the tracking finalizer is not repeated",
			in: tbInput(tbJob(func(j *batchv1.Job) {
				j.Spec.Template.Finalizers = []string{"example.com/keep", batchv1.JobTrackingFinalizer}
			})),
			wantIndexes: []int{-1},
			check: func(t *testing.T, p *Plan) {
				assert.Equal(t, []string{"example.com/keep", batchv1.JobTrackingFinalizer}, p.Create[0].Pod.Finalizers)
			},
		},
		{
			name:        "at most 500 creations per sync",
			in:          tbInput(tbJob(tbSize(1000, 600))),
			wantIndexes: tbMinus1s(500),
		},
		{
			name:        "the creation cap is configurable",
			in:          tbWithInput(tbInput(tbJob(tbIndexed, tbSize(10, 10))), func(in *Input) { in.Options.MaxCreatesPerSync = 3 }),
			wantIndexes: []int{0, 1, 2},
		},
		{
			name: "Indexed: the first pending indexes",
			in: tbInput(tbJob(tbIndexed, tbSize(6, 3), tbStatus(func(s *batchv1.JobStatus) { s.CompletedIndexes, s.Succeeded = "0", 1 })),
				tbPod("p-2", tbIx(2))),
			wantIndexes: []int{1, 3},
		},
		{
			name:        "Indexed: the pod of an index",
			in:          tbInput(tbJob(tbIndexed, tbSize(2, 1))),
			wantIndexes: []int{0},
			check: func(t *testing.T, p *Plan) {
				pod := p.Create[0].Pod
				assert.Equal(t, "0", pod.Annotations[batchv1.JobCompletionIndexAnnotation], "index annotation")
				assert.Equal(t, "0", pod.Labels[batchv1.JobCompletionIndexAnnotation], "index label")
				assert.Equal(t, "job-0", pod.Spec.Hostname, "hostname")
				assert.Equal(t, "job-0-", pod.GenerateName, "generateName")
				assert.True(t, strings.HasPrefix(pod.Name, "job-0-") && len(pod.Name) == len("job-0-")+5, "name %q: the generateName and five characters", pod.Name)
				for k, v := range tbLabels() {
					assert.Equal(t, v, pod.Labels[k], "label %s", k)
				}
				assert.Len(t, pod.Labels, len(tbLabels())+1, "labels: the template's and the index")
				require.Len(t, pod.Spec.Containers, 1)
				assert.Contains(t, pod.Spec.Containers[0].Env, corev1.EnvVar{Name: "JOB_COMPLETION_INDEX", ValueFrom: &corev1.EnvVarSource{
					FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['batch.kubernetes.io/job-completion-index']"},
				}})
				assert.NotContains(t, pod.Annotations, batchv1.JobIndexFailureCountAnnotation, "no failure count without backoffLimitPerIndex")
			},
		},
		{
			name:        "Indexed: the index of a pod still terminating is skipped under podReplacementPolicy Failed",
			in:          tbInput(tbJob(tbIndexed, tbSize(3, 3), tbReplaceFailed), tbPod("p-0", tbIx(0), tbDeleted)),
			wantIndexes: []int{1, 2},
		},
		{
			name:        "Indexed: the index of a failed pod is recreated",
			in:          tbInput(tbJob(tbIndexed, tbSize(3, 3)), tbPod("p-1", tbIx(1), tbFailed)),
			wantIndexes: []int{0, 1, 2},
		},
		{
			name:        "per-index backoff not passed: the index waits, others start, requeue for it",
			in:          tbInput(tbJob(tbSize(3, 3), tbPerIndex(3, -1)), tbPod("p-0", tbIx(0), tbFailedAgo(4*time.Second))),
			wantIndexes: []int{1, 2},
			wantRequeue: 6 * time.Second,
		},
		{
			name:        "per-index backoff uses the index's failure count",
			in:          tbInput(tbJob(tbSize(1, 1), tbPerIndex(5, -1)), tbPod("p-0", tbIx(0), tbFailureCount(2, 1), tbFailedAgo(time.Minute))),
			wantIndexes: []int{},
			wantRequeue: 20 * time.Second, // failure number 4: 80s after the failure
		},
		{
			name:        "a replacement carries the index's failure count, and its predecessor keeps the finalizer",
			in:          tbInput(tbJob(tbSize(2, 1), tbPerIndex(3, -1)), tbPod("p-0", tbIx(0), tbFailureCount(1, 0), tbFailed)),
			wantIndexes: []int{0},
			check: func(t *testing.T, p *Plan) {
				failureCounts(t, p, 0, "2", "")
				assert.Empty(t, p.RemoveFinalizers, "the failed pod keeps its finalizer until its replacement exists")
			},
		},
		{
			name: "once the replacement exists, the predecessor loses its finalizer",
			in: tbInput(tbJob(tbSize(2, 1), tbPerIndex(3, -1)),
				tbPod("p-0", tbIx(0), tbFailureCount(1, 0), tbFailed), tbPod("p-0b", tbIx(0), tbFailureCount(2, 0))),
			wantIndexes: []int{},
			check: func(t *testing.T, p *Plan) {
				assert.Equal(t, []string{"p-0"}, tbActionNames(p.RemoveFinalizers))
			},
		},
		{
			name: "of two failed pods of an index, the later one is replaced and keeps its finalizer",
			in: tbInput(tbJob(tbSize(1, 1), tbPerIndex(3, -1)),
				tbPod("p-0b", tbIx(0), tbFailureCount(1, 0), tbFailedAgo(30*time.Minute)),
				tbPod("p-0a", tbIx(0), tbFailureCount(0, 0), tbFailedAgo(time.Hour))),
			wantIndexes: []int{0},
			check: func(t *testing.T, p *Plan) {
				failureCounts(t, p, 0, "2", "")
				assert.Equal(t, "replaces failed pod p-0b", p.Create[0].Reason)
				assert.Equal(t, []string{"p-0a"}, tbActionNames(p.RemoveFinalizers))
			},
		},
		{
			name: "the replacement of an ignored failure counts it as ignored",
			in: tbInput(tbJob(tbSize(1, 1), tbPerIndex(1, -1), tbFailurePolicy(ignoreDisruption)),
				tbPod("p-0", tbIx(0), tbFailureCount(1, 0), tbFailed, tbPodCondition(corev1.DisruptionTarget))),
			wantIndexes: []int{0},
			check:       func(t *testing.T, p *Plan) { failureCounts(t, p, 0, "1", "1") },
		},
		{
			name:        "the first pod of an index under backoffLimitPerIndex has failure count 0",
			in:          tbInput(tbJob(tbSize(1, 1), tbPerIndex(1, -1))),
			wantIndexes: []int{0},
			check:       func(t *testing.T, p *Plan) { failureCounts(t, p, 0, "0", "") },
		},
		{
			name:        "Indexed: failed indexes are not recreated",
			in:          tbInput(tbJob(tbSize(3, 3), tbPerIndex(0, -1)), tbPod("p-0", tbIx(0), tbFailed)),
			wantIndexes: []int{1, 2},
		},
		{
			name:        "job-wide backoff not passed: no creation, requeue after the rest",
			in:          tbInput(tbJob(tbSize(3, 2)), tbPod("f", tbFailedAgo(3*time.Second))),
			wantIndexes: []int{},
			wantRequeue: 7 * time.Second,
		},
		{
			name:        "job-wide backoff doubles with consecutive failures",
			in:          tbInput(tbJob(tbSize(3, 1)), tbPod("f1", tbFailedAgo(15*time.Second)), tbPod("f2", tbFailedAgo(12*time.Second))),
			wantIndexes: []int{},
			wantRequeue: 8 * time.Second,
		},
		{
			name: "a success after the failures resets the job-wide backoff",
			in: tbInput(tbJob(tbSize(3, 1)), tbPod("f", tbFailedAgo(20*time.Second)),
				tbPod("s", tbTerminated(corev1.PodSucceeded, 0, tbAgo(10*time.Second)))),
			wantIndexes: []int{-1},
		},
		{
			name:        "the caller's backoff record counts",
			in:          tbWithInput(tbInput(tbJob()), func(in *Input) { in.Backoff = plainbackoff.Record{Failures: 3, LastFailure: tbAgo(10 * time.Second)} }),
			wantIndexes: []int{},
			wantRequeue: 30 * time.Second,
		},
		{
			name: "the job-wide backoff does not apply with backoffLimitPerIndex",
			in: tbWithInput(tbInput(tbJob(tbSize(2, 2), tbPerIndex(1, -1))),
				func(in *Input) { in.Backoff = plainbackoff.Record{Failures: 5, LastFailure: tbAgo(time.Second)} }),
			wantIndexes: []int{0, 1},
		},
		{
			name:        "a backoff ending in less than a second is requeued after one second",
			in:          tbInput(tbJob(), tbPod("f", tbFailedAgo(9500*time.Millisecond))),
			wantIndexes: []int{},
			wantRequeue: time.Second,
		},
		{
			name:        "the shortest backoff requeue is configurable",
			in:          tbWithInput(tbInput(tbJob(), tbPod("f", tbFailedAgo(9500*time.Millisecond))), func(in *Input) { in.Options.MinRequeue = 3 * time.Second }),
			wantIndexes: []int{},
			wantRequeue: 3 * time.Second,
		},
		{
			name: "the backoff policy is configurable",
			in: tbWithInput(tbInput(tbJob(), tbPod("f", tbFailedAgo(3*time.Second))), func(in *Input) {
				in.Options.Backoff = plainbackoff.Policy{Base: time.Second, Max: time.Minute}
			}),
			wantIndexes: []int{-1},
		},
		{
			name:        "unsatisfied expectations: no creation",
			in:          tbWithInput(tbInput(tbJob(tbSize(3, 3))), func(in *Input) { in.ExpectationsSatisfied = false }),
			wantIndexes: []int{},
		},
	}
}

func TestDecision7_Creations(t *testing.T) {
	for _, tc := range tbD7Cases() {
		t.Run(tc.name, func(t *testing.T) {
			p := tbCompute(t, tc.in)
			assert.Empty(t, p.Delete, "Compute(in).Delete")
			if diff := cmp.Diff(tc.wantIndexes, tbCreateIndexes(p.Create), cmp.FilterValues(func(a, b []int) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())); diff != "" {
				t.Errorf("Compute(in).Create indexes (-want +got):\n%s\nplan:\n%s", diff, p)
			}
			assert.Equal(t, tc.wantRequeue, p.RequeueAfter, "Compute(in).RequeueAfter (%s)", p.RequeueReason)
			for _, c := range p.Create {
				assert.Equal(t, "ns", c.Pod.Namespace, "namespace of the new pod")
				assert.Contains(t, c.Pod.Finalizers, batchv1.JobTrackingFinalizer, "finalizer of the new pod")
			}
			if tc.check != nil {
				tc.check(t, p)
			}
		})
	}
}

type tbD8Case struct {
	name          string
	in            Input
	wantDelete    []string
	wantSuspended string // "Status/Reason/Message" of the Suspended condition, "" when absent
	wantStartTime *metav1.Time
	wantCreate    int
	wantEvents    []string
	wantEmpty     bool
}

func (c tbD8Case) input() tbInputCase { return tbInputCase{c.name, c.in} }

func tbD8Cases() []tbD8Case {
	suspendedCond := tbWithCond(tbCond(batchv1.JobSuspended, "JobSuspended", "Job suspended"))
	return []tbD8Case{
		{
			name:          "suspending deletes every active pod, sets Suspended and clears startTime",
			in:            tbInput(tbJob(tbSize(3, 3), tbSuspend), tbPod("a", tbReady), tbPod("b"), tbPod("s", tbSucceeded)),
			wantDelete:    []string{"b", "a"},
			wantSuspended: "True/JobSuspended/Job suspended",
			wantEvents:    []string{"Suspended"},
		},
		{
			name:          "a Job created suspended gets Suspended and no startTime",
			in:            tbInput(tbJob(tbSuspend, tbNotStarted)),
			wantSuspended: "True/JobSuspended/Job suspended",
			wantEvents:    []string{"Suspended"},
		},
		{
			name:          "an already suspended Job asks for nothing",
			in:            tbInput(tbJob(tbSuspend, tbNotStarted, suspendedCond)),
			wantSuspended: "True/JobSuspended/Job suspended",
			wantEmpty:     true,
		},
		{
			name:          "resuming sets Suspended=False and a new startTime, and creates pods",
			in:            tbInput(tbJob(tbNotStarted, suspendedCond)),
			wantSuspended: "False/JobResumed/Job resumed",
			wantStartTime: tbTime(tbNow),
			wantCreate:    1,
			wantEvents:    []string{"Resumed"},
		},
		{
			// A sync after the resume that could not manage pods (expectations not
			// satisfied) already gave the Job a start time; the write that resumes
			// it sets a new one, which the API server accepts in that update only.
			name: "resuming sets a new start time even when one was written since the resume",
			in: tbInput(tbJob(suspendedCond, tbStatus(func(s *batchv1.JobStatus) {
				s.StartTime = tbTime(tbAgo(time.Minute))
			}))),
			wantSuspended: "False/JobResumed/Job resumed",
			wantStartTime: tbTime(tbNow),
			wantCreate:    1,
			wantEvents:    []string{"Resumed"},
		},
		{
			name: "resuming with unsatisfied expectations sets only the start time",
			in: tbWithInput(tbInput(tbJob(tbNotStarted, suspendedCond)),
				func(in *Input) { in.ExpectationsSatisfied = false }),
			wantSuspended: "True/JobSuspended/Job suspended",
			wantStartTime: tbTime(tbNow),
		},
		{
			name:          "the first sync of an unsuspended Job sets startTime and no Suspended condition",
			in:            tbInput(tbJob(tbNotStarted)),
			wantStartTime: tbTime(tbNow),
			wantCreate:    1,
		},
		{
			// Nothing is written either: the active count of the cache waits for
			// the expectations (onlyPodCountsDiffer).
			name: "unsatisfied expectations: suspension waits",
			in: tbWithInput(tbInput(tbJob(tbSuspend), tbPod("a")),
				func(in *Input) { in.ExpectationsSatisfied = false }),
			wantStartTime: tbTime(tbAgo(time.Hour)),
			wantEmpty:     true,
		},
	}
}

func TestDecision8_SuspendResume(t *testing.T) {
	for _, tc := range tbD8Cases() {
		t.Run(tc.name, func(t *testing.T) {
			p := tbCompute(t, tc.in)
			if diff := cmp.Diff(tc.wantDelete, tbDeleteNames(p.Delete), tbEmptyEqual); diff != "" {
				t.Errorf("Compute(in).Delete (-want +got):\n%s", diff)
			}
			for _, d := range p.Delete {
				assert.True(t, d.RemoveFinalizerFirst, "suspension removes the finalizer of %s first", d.Pod.Name)
			}
			assert.Equal(t, tc.wantSuspended, tbCondOf(&p.Status, batchv1.JobSuspended), "Suspended condition\nplan:\n%s", p)
			if c := tbCondOf(&p.Status, batchv1.JobSuspended); c != "" && c != tbCondOf(&inputJob(tc.in).Status, batchv1.JobSuspended) {
				got := p.Status.Conditions[0].LastTransitionTime.Time
				for _, cond := range p.Status.Conditions {
					if cond.Type == batchv1.JobSuspended {
						got = cond.LastTransitionTime.Time
					}
				}
				assert.Equal(t, tbNow, got.UTC(), "lastTransitionTime of a changed Suspended condition")
			}
			assert.Equal(t, tc.wantStartTime, p.Status.StartTime, "Status.StartTime")
			assert.Len(t, p.Create, tc.wantCreate, "Compute(in).Create")
			var events []string
			for _, e := range p.Events {
				events = append(events, e.Reason)
			}
			assert.Equal(t, tc.wantEvents, events, "event reasons")
			assert.Equal(t, tc.wantEmpty, p.IsEmpty(), "IsEmpty\nplan:\n%s", p)
			if tc.wantDelete != nil {
				assert.Equal(t, int32(0), p.Status.Active, "Status.Active of a suspended Job")
				assert.Equal(t, ptr.To(int32(len(tc.wantDelete))), p.Status.Terminating, "Status.Terminating of a suspended Job")
			}
		})
	}
}

// The name of an index's pod is the same as long as the cache shows the same pods of
// that index (a creation sent again after a timeout is answered AlreadyExists), and
// changes once a pod of the index appears or goes.
func TestIndexedPodNames(t *testing.T) {
	job := tbJob(tbIndexed, tbSize(3, 3))
	nameOf := func(p *Plan, index int) string {
		for _, c := range p.Create {
			if c.Index == index {
				return c.Pod.Name
			}
		}
		t.Fatalf("no creation for index %d in\n%s", index, p)
		return ""
	}
	first := tbCompute(t, tbInput(job))
	again := tbCompute(t, tbInput(job))
	for ix := range 3 {
		assert.Equal(t, nameOf(first, ix), nameOf(again, ix), "index %d: the same cache gives the same name", ix)
	}
	assert.NotEqual(t, nameOf(first, 0), nameOf(first, 1), "indexes have their own names")

	failed := tbPod(nameOf(first, 1), tbIx(1), tbFailedAgo(time.Minute), tbNoFinalizer)
	other := tbPod(nameOf(first, 2), tbIx(2))
	next := tbCompute(t, tbInput(tbJob(tbIndexed, tbSize(3, 3), tbStatus(func(s *batchv1.JobStatus) { s.Failed = 1 })), failed, other))
	assert.Equal(t, nameOf(first, 0), nameOf(next, 0), "index 0: no pod of it appeared, same name")
	assert.NotEqual(t, nameOf(first, 1), nameOf(next, 1), "index 1: the replacement of a failed pod that still exists gets another name")
}

// A name in Input.TakenPodNames (held by a pod that is not the Job's, such as one it
// released) is skipped for the next name of a fixed sequence: the decision stays
// repeatable, and other indexes keep their names.
func TestIndexedPodNamesSkipTakenNames(t *testing.T) {
	job := tbJob(tbIndexed, tbSize(2, 2))
	names := func(taken ...string) map[int]string {
		in := tbInput(job)
		if len(taken) > 0 {
			in.TakenPodNames = sets.New(taken...)
		}
		out := map[int]string{}
		for _, c := range tbCompute(t, in).Create {
			out[c.Index] = c.Pod.Name
		}
		require.Len(t, out, 2, "creations")
		return out
	}
	free := names()
	tests := []struct {
		name        string
		taken       []string
		wantChanged []bool // per index: the name differs from the free one
	}{
		{name: "nothing taken", wantChanged: []bool{false, false}},
		{name: "index 0's name taken", taken: []string{free[0]}, wantChanged: []bool{true, false}},
		{name: "both taken", taken: []string{free[0], free[1]}, wantChanged: []bool{true, true}},
		{name: "an unrelated name", taken: []string{"someone-else"}, wantChanged: []bool{false, false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := names(tc.taken...)
			again := names(tc.taken...)
			assert.Equal(t, got, again, "the same input gives the same names")
			for ix, changed := range tc.wantChanged {
				assert.Equal(t, changed, got[ix] != free[ix], "index %d: %s vs %s", ix, got[ix], free[ix])
				assert.NotContains(t, tc.taken, got[ix], "index %d got a taken name", ix)
			}
		})
	}
	// A taken name that the skip sequence reaches is skipped too.
	once := names(free[0])[0]
	assert.NotEqual(t, once, names(free[0], once)[0], "the second name of the sequence, taken as well")
}

// The plan that releases a live pod of an Indexed Job replaces it under another
// name: the released pod keeps its name, which the index's sequence (no longer
// seeing the pod) would give again (issue 37: no creation refused and sent again).
func TestIndexedReleasedPodNameIsTaken(t *testing.T) {
	job := tbJob(tbIndexed, tbSize(2, 2))
	free := map[int]string{}
	for _, c := range tbCompute(t, tbInput(job)).Create {
		free[c.Index] = c.Pod.Name
	}
	other := tbPodLabels(map[string]string{"app": "other"})
	released := tbPod(free[1], tbIx(1), other)
	kept := tbPod(free[0], tbIx(0))
	in := tbInput(job, kept, released)
	p := tbCompute(t, in)
	require.Equal(t, []string{free[1]}, tbActionNames(p.Release), "the relabelled pod is released")
	require.Len(t, p.Create, 1, "the released index is replaced\nplan:\n%s", p)
	assert.Equal(t, 1, p.Create[0].Index)
	assert.NotEqual(t, free[1], p.Create[0].Pod.Name, "the replacement takes the released pod's name")
	assert.Nil(t, in.TakenPodNames, "Input.TakenPodNames is not modified")
}
