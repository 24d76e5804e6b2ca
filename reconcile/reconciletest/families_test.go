package reconciletest_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// familyWrites are the API writes of one run by verb and resource, and the events
// recorded (one write each: a Job of 4 pods records none twice).
type familyWrites struct{ creates, patches, deletes, status, events int }

func (w familyWrites) total() int { return w.creates + w.patches + w.deletes + w.status + w.events }

func (w familyWrites) String() string {
	return fmt.Sprintf("%d pod creates, %d pod patches, %d pod deletes, %d Job status, %d events", w.creates, w.patches, w.deletes, w.status, w.events)
}

// family is one lifecycle family of a Job: its spec, what the kubelet does to its
// pods, what happens to it at given steps, and what the Job controller of
// Kubernetes 1.37 writes for the same history (see TestFamilyWrites).
type family struct {
	name string
	job  func(*batchv1.Job)
	// script is the kubelet's (Kubelet.SetScript).
	script func(*reconciletest.Kubelet, *corev1.Pod) error
	// at runs before the given step (the Job suspended, resumed, deleted, a pod
	// released, the kubelet's script changed).
	at map[int]func(t *testing.T, c *reconciletest.Cluster)
	// gone: the run ends when the Job is gone and no pod holds the finalizer.
	gone bool
	// failed: the Job ends Failed (otherwise Complete, unless gone).
	failed bool
	// upstream is what the Job controller writes for the history: the
	// kube-controller-manager v1.37.2 measured on the real control plane, the same
	// history played by `make bench-cluster BENCHFLAGS=families` (hack/benchcluster
	// families.go, its status trace in the run's log); see TestFamilyWrites.
	upstream familyWrites
}

// holdPods starts each Pending pod, ready, and leaves it running.
func holdPods(k *reconciletest.Kubelet, pod *corev1.Pod) error {
	if pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodPending {
		if err := k.Run(pod.Namespace, pod.Name); err != nil {
			return err
		}
		return k.SetReady(pod.Namespace, pod.Name, true)
	}
	return nil
}

// succeedIndex is holdPods, then the pod of index succeeds; the others keep running.
func succeedIndex(index string) func(*reconciletest.Kubelet, *corev1.Pod) error {
	return func(k *reconciletest.Kubelet, pod *corev1.Pod) error {
		if pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodRunning && pod.Annotations[batchv1.JobCompletionIndexAnnotation] == index {
			return k.Succeed(pod.Namespace, pod.Name)
		}
		return holdPods(k, pod)
	}
}

// failOne is holdPods, but the first running pod it meets fails with exitCode.
func failOne(exitCode int32) func(*reconciletest.Kubelet, *corev1.Pod) error {
	failed := false
	return func(k *reconciletest.Kubelet, pod *corev1.Pod) error {
		if !failed && pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodRunning {
			failed = true
			return k.Fail(pod.Namespace, pod.Name, exitCode)
		}
		return holdPods(k, pod)
	}
}

func setScript(s func(*reconciletest.Kubelet, *corev1.Pod) error) func(*testing.T, *reconciletest.Cluster) {
	return func(_ *testing.T, c *reconciletest.Cluster) { c.Kubelet().SetScript(s) }
}

func updateJob(mutate func(*batchv1.Job)) func(*testing.T, *reconciletest.Cluster) {
	return func(t *testing.T, c *reconciletest.Cluster) {
		if _, err := c.Jobs().Update("default", "family", mutate); err != nil {
			t.Fatal(err)
		}
	}
}

const familyExitCode = 42

func onExit42(action batchv1.PodFailurePolicyAction) *batchv1.PodFailurePolicy {
	return &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
		Action:      action,
		OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{familyExitCode}},
	}}}
}

func indexed(j *batchv1.Job) { j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion) }

// families are the lifecycle families of a Job of 4 pods run at once. The Job
// controller's writes are kube-controller-manager v1.37.2's on the real control
// plane (2026-12-06, two rounds, the same in both but where a family says; its
// status trace gives each sum's terms). Its status writes: one at each sync where
// active, ready, terminating, startTime or a condition changes (the first sync,
// the pods turning ready, the creation of replacements, a suspension and the end
// of its terminations, a resumption); at a sync that finds finished pods holding
// the finalizer, one with uncountedTerminatedPods (and an interim condition),
// then one with the counts once the finalizers are gone, except an Indexed Job's
// successes, counted at once through completedIndexes; the finished condition
// goes with the counts when no pod is left terminating, and in a write of its
// own after the one that says terminating 0 otherwise. A pod it deletes for a
// suspension costs a finalizer removal and the deletion; one it deletes when the
// Job fails or meets its success policy keeps its finalizer until it is terminal.
// Events: one per pod created or deleted and one per Job condition that
// finishes, suspends or resumes it. Each family's sum reads in the order of its
// writes. A run takes a table of its own: a kubelet's script keeps what it did.
func families() []family {
	return []family{
		{name: "complete NonIndexed", script: reconciletest.SucceedPods(),
			upstream: familyWrites{creates: 4, patches: 4, status: 1 + 1 + 2, events: 4 + 1}},
		// The successes are counted through completedIndexes at once, with
		// SuccessCriteriaMet; Complete follows in a write of its own.
		{name: "complete Indexed", job: indexed, script: reconciletest.SucceedPods(),
			upstream: familyWrites{creates: 4, patches: 4, status: 1 + 1 + 1 + 1, events: 4 + 1}},
		// Two pods fail and two succeed in the same step: no backoff (the failures
		// come no later than the last success), so the two replacements are created
		// in the sync that records them (their active count with the record); then
		// ready, succeeded.
		{name: "retries with backoff", script: reconciletest.FailFirst(2, 1),
			upstream: familyWrites{creates: 6, patches: 6, status: 1 + 1 + 2 + 1 + 2, events: 6 + 1}},
		{name: "backoffLimitPerIndex", job: func(j *batchv1.Job) {
			indexed(j)
			j.Spec.BackoffLimit = nil
			j.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
			// Two pods fail and two succeed in the same step: the successes are
			// counted at once (completedIndexes). Each failed index waits out its own
			// backoff (10 s for a first failure), so its replacement comes later, in
			// a write of its own (active). The failed pods keep their finalizer until
			// their index's replacement shows in the cache (its failure count moves
			// to it): recorded after that, with the replacements' readiness, in two
			// writes (uncounted, then failed 2). Was 1 + 1 + 2 + 1 + 2 + 2 worked out
			// from syncJob, which took the first successes for two writes.
		}, script: reconciletest.FailFirst(2, 1),
			upstream: familyWrites{creates: 6, patches: 6, status: 1 + 1 + 1 + 1 + 2 + 2, events: 6 + 1}},
		// One pod fails with 42 while the others run: the Job fails (FailureTarget,
		// terminating 3, uncounted; then failed 4), the other three are deleted while
		// running and counted failed; then terminating 0, then Failed.
		{name: "podFailurePolicy FailJob", failed: true, job: func(j *batchv1.Job) {
			j.Spec.PodFailurePolicy = onExit42(batchv1.PodFailurePolicyActionFailJob)
		}, script: failOne(familyExitCode),
			upstream: familyWrites{creates: 4, patches: 4, deletes: 3, status: 1 + 1 + 2 + 1 + 1, events: 4 + 3 + 1}},
		{name: "podFailurePolicy FailIndex", failed: true, job: func(j *batchv1.Job) {
			indexed(j)
			j.Spec.BackoffLimit = nil
			j.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
			j.Spec.PodFailurePolicy = onExit42(batchv1.PodFailurePolicyActionFailIndex)
			// One pod fails with 42 and three succeed in the same step: the index fails,
			// the Job fails (FailedIndexes) in the sync that records them (FailureTarget,
			// succeeded 3, the failure uncounted; then failed 1 and Failed).
		}, script: reconciletest.FailFirst(1, familyExitCode),
			upstream: familyWrites{creates: 4, patches: 4, status: 1 + 1 + 2, events: 4 + 1}},
		{name: "podFailurePolicy Ignore", job: func(j *batchv1.Job) {
			j.Spec.PodFailurePolicy = onExit42(batchv1.PodFailurePolicyActionIgnore)
			// The two failures are not counted; replaced at once, as retries above.
		}, script: reconciletest.FailFirst(2, familyExitCode),
			upstream: familyWrites{creates: 6, patches: 6, status: 1 + 1 + 2 + 1 + 2, events: 6 + 1}},
		// Index 0 succeeds while the others run: the Job meets its success policy
		// (SuccessCriteriaMet, succeeded 1 through completedIndexes, terminating 3 in
		// one write) and deletes them; then terminating 0, then Complete. Was
		// 1 + 1 + 2 + 2 worked out from syncJob, which took the success for two writes.
		{name: "successPolicy", job: func(j *batchv1.Job) {
			indexed(j)
			j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr.To("0")}}}
		}, script: succeedIndex("0"),
			upstream: familyWrites{creates: 4, patches: 4, deletes: 3, status: 1 + 1 + 1 + 1 + 1, events: 4 + 3 + 1}},
		// Suspended while its pods run (the 4 deleted: Suspended, terminating 4; then
		// terminating 0), resumed (4 new pods, startTime), ready, succeeded.
		{name: "suspend and resume", script: holdPods, at: map[int]func(*testing.T, *reconciletest.Cluster){
			4: updateJob(func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) }),
			7: updateJob(func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(false) }),
			9: setScript(reconciletest.SucceedPods()),
		}, upstream: familyWrites{creates: 8, patches: 8, deletes: 4, status: 1 + 1 + 1 + 1 + 1 + 1 + 2, events: 8 + 4 + 1 + 1 + 1}},
		// Deleted while its pods run: the garbage collector deletes them, the
		// controller removes their finalizers. The Job controller sent 4 to 7 finalizer
		// removals in the runs: a deleted Job queues its selector's pods for the
		// removal, and each pod deletion queues the pod again, found holding the
		// finalizer by a cache that does not show the first removal yet (the patch
		// goes again and succeeds); the column takes its least, 4.
		{name: "deletion while running", script: holdPods, gone: true, at: map[int]func(*testing.T, *reconciletest.Cluster){
			4: func(t *testing.T, c *reconciletest.Cluster) {
				if err := c.Jobs().Delete("default", "family"); err != nil {
					t.Fatal(err)
				}
				c.CollectGarbage()
			},
		}, upstream: familyWrites{creates: 4, patches: 4, status: 1 + 1, events: 4}},
		// The running pod of index 1 is relabelled out of the selector: released (the
		// finalizer goes in the same patch), its index gets a new pod (ready 3), which
		// turns ready (ready 4); then all succeed (counted at once, Complete apart).
		{name: "released pod", job: indexed, script: holdPods, at: map[int]func(*testing.T, *reconciletest.Cluster){
			4: func(t *testing.T, c *reconciletest.Cluster) {
				for _, p := range c.ListPods("default") {
					if p.Annotations[batchv1.JobCompletionIndexAnnotation] == "1" {
						if _, err := c.PatchPodAs(p.Namespace, p.Name, []byte(`{"metadata":{"labels":{"batch.kubernetes.io/controller-uid":"released"}}}`)); err != nil {
							t.Fatal(err)
						}
					}
				}
			},
			7: setScript(reconciletest.SucceedPods()),
		}, upstream: familyWrites{creates: 5, patches: 5, status: 1 + 1 + 1 + 1 + 1 + 1, events: 5 + 1}},
		// Its parallelism lowered to 2 while its 4 pods run: two deleted (active 2,
		// terminating 2), their finalizers removed once terminal, not counted failed
		// (terminating 0); raised to 4 again: two new pods (active 4), ready; then all
		// succeed.
		{name: "parallelism change", script: holdPods, at: map[int]func(*testing.T, *reconciletest.Cluster){
			4:  updateJob(func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](2) }),
			8:  updateJob(func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](4) }),
			12: setScript(reconciletest.SucceedPods()),
		}, upstream: familyWrites{creates: 6, patches: 6, deletes: 2, status: 1 + 1 + 1 + 1 + 1 + 1 + 2, events: 6 + 2 + 1}},
		// Its pods run past activeDeadlineSeconds: the Job fails (FailureTarget,
		// terminating 4, the pods it deletes counted failed: uncounted, then failed
		// 4); they are gone once terminal: terminating 0, then Failed. Was
		// 1 + 1 + 1 + 2 worked out from syncJob, which took the deadline's record
		// for one write.
		{name: "activeDeadlineSeconds", failed: true, job: func(j *batchv1.Job) {
			j.Spec.ActiveDeadlineSeconds = ptr.To[int64](5)
		}, script: holdPods,
			upstream: familyWrites{creates: 4, patches: 4, deletes: 4, status: 1 + 1 + 2 + 1 + 1, events: 4 + 4 + 1}},
	}
}

// TestFamilyWrites runs a Job of every lifecycle family on the Driver (one sync a
// step, no event lag) and checks that jobkit writes, by verb and resource, and
// records events, no more than the Job controller of Kubernetes 1.37 for the same
// history (issue 37). The Job controller cannot run in this model: it is
// k8s.io/kubernetes, far outside the core's dependency budget, and it reads
// through client-go's informers and clientset rather than reconcile.Client. Its
// column is what kube-controller-manager v1.37.2 wrote on the real control plane
// for the same histories (`make bench-cluster BENCHFLAGS=families`, which runs
// jobkit-clientgo beside it: the jobkit figures there equal these). With
// -latency.table it prints the table of docs/performance.md.
func TestFamilyWrites(t *testing.T) {
	if *latencyTable {
		fmt.Println()
		fmt.Println("| family | jobkit | Job controller 1.37 | jobkit's writes / its |")
		fmt.Println("|---|---|---|---|")
	}
	for _, f := range families() {
		t.Run(strings.ReplaceAll(f.name, " ", "_"), func(t *testing.T) {
			got := runFamily(t, f)
			if *latencyTable {
				fmt.Printf("| %s | %v | %v | %d / %d |\n", f.name, got, f.upstream, got.total(), f.upstream.total())
			}
			check := func(verb string, got, upstream int) {
				if got > upstream {
					t.Errorf("%s: %d %s, the Job controller %d for the same history", f.name, got, verb, upstream)
				}
			}
			check("pod creates", got.creates, f.upstream.creates)
			check("pod patches", got.patches, f.upstream.patches)
			check("pod deletes", got.deletes, f.upstream.deletes)
			check("Job status writes", got.status, f.upstream.status)
			check("events", got.events, f.upstream.events)
		})
	}
}

// runFamily runs f to its end and returns jobkit's writes.
func runFamily(t *testing.T, f family) familyWrites {
	t.Helper()
	const name = "family"
	c := reconciletest.NewCluster(reconciletest.Options{Seed: 1})
	var events atomic.Int64 // pod calls of one kind, and their events, run concurrently
	rec := reconcile.EventRecorderFunc(func(runtime.Object, string, string, string, ...any) { events.Add(1) })
	r, err := reconcile.New(reconcile.Config{Name: batchv1.JobControllerName, Clock: c.Clock(), Events: rec}, c, reconcile.JobStatusWriter(c))
	if err != nil {
		t.Fatal(err)
	}
	job := reconciletest.NewJob("default", name, 4, 4)
	if f.job != nil {
		f.job(job)
	}
	if _, err := c.Jobs().Create(job); err != nil {
		t.Fatal(err)
	}
	c.Kubelet().SetScript(f.script)
	d := reconciletest.NewDriver(c, r)
	ctx := context.Background()
	done := false
	for step := 1; step <= 200 && !done; step++ {
		if fn := f.at[step]; fn != nil {
			fn(t, c)
		}
		if _, err := d.Step(ctx, "default", name); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if f.gone {
			if _, err := d.CleanOrphans(ctx); err != nil {
				t.Fatalf("step %d: orphans: %v", step, err)
			}
			done = tracked(c) == 0
			continue
		}
		done = d.Done("default", name) && tracked(c) == 0
	}
	if !done {
		t.Fatalf("%s: not finished after 200 steps", f.name)
	}
	if !f.gone {
		j, err := c.Jobs().Get("default", name)
		if err != nil {
			t.Fatal(err)
		}
		want := batchv1.JobComplete
		if f.failed {
			want = batchv1.JobFailed
		}
		if !jobstatus.IsConditionTrue(j.Status.Conditions, want) {
			t.Fatalf("%s: the Job ended with conditions %v, want %s", f.name, j.Status.Conditions, want)
		}
	}
	w := familyWrites{events: int(events.Load())}
	for _, call := range c.Calls() {
		switch call.Op {
		case reconciletest.OpCreatePod:
			w.creates++
		case reconciletest.OpPatchPod:
			w.patches++
		case reconciletest.OpDeletePod:
			w.deletes++
		case reconciletest.OpUpdateJobStatus, reconciletest.OpUpdateStatus:
			w.status++
		}
	}
	return w
}

// tracked counts the pods that hold the Job tracking finalizer.
func tracked(c *reconciletest.Cluster) int {
	n := 0
	for _, p := range c.ListPods("default") {
		for _, f := range p.Finalizers {
			if f == batchv1.JobTrackingFinalizer {
				n++
			}
		}
	}
	return n
}
