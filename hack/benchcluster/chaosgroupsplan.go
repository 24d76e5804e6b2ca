package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// The two APIs of JobSets the group chaos runs: the example's own group, which
// names RestartJob rules and keeps per-child restart counters, and JobSet's, whose
// CRD lets a running group's replicas change (the example's CRD refuses any change
// of replicatedJobs).
var (
	gvrExampleJobSets  = schema.GroupVersionResource{Group: "jobset.examples.jobkit.dev", Version: "v1alpha2", Resource: "jobsets"}
	gvrUpstreamJobSets = schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}
)

// Annotations of a group's pod templates that kwok reads (hack/cluster/kwok.yaml):
// fail only in the child of one index, only while its restart attempts are below N.
const (
	annotationFailJobIndex = "kwok.jobkit.dev/fail-job-index"
	annotationFailRestarts = "kwok.jobkit.dev/fail-restarts"
	// labelGroupChaos marks the group chaos run's JobSets, child Jobs and pods.
	labelGroupChaos = "jobkit.dev/chaos-group"
	// JobSet's labels on the children and their pods (plain/group's).
	labelJobSetName     = "jobset.sigs.k8s.io/jobset-name"
	labelRoleName       = "jobset.sigs.k8s.io/replicatedjob-name"
	labelJobIndex       = "jobset.sigs.k8s.io/job-index"
	labelRestartAttempt = "jobset.sigs.k8s.io/restart-attempt"
	labelJobRestart     = "jobset.sigs.k8s.io/job-restart-attempt"
	annotationInPlace   = "jobset.sigs.k8s.io/in-place-restart-attempt"
)

// groupShape is the kind of a chaos group: its rules, its failures and what the
// driver does to it.
type groupShape string

const (
	gRecreate   groupShape = "recreate"    // a worker fails N times, the group restarts (Recreate)
	gBlocking   groupShape = "blocking"    // the same under BlockingRecreate
	gRestartJob groupShape = "restart-job" // a worker fails N times, a RestartJob rule restarts it alone
	gDependsOn  groupShape = "depends-on"  // the workers depend on the leader (Ready or Complete)
	gSuccessAny groupShape = "success-any" // success policy Any on the leader; the workers run long
	gSuspend    groupShape = "suspend"     // suspended while running, resumed
	gInPlace    groupShape = "in-place"    // restartStrategy InPlaceRestart; the driver plays the agents
	gScale      groupShape = "scale"       // the workers' replicas changed while running (JobSet's API)
	gFailGroup  groupShape = "fail-group"  // a worker fails once; a FailJobSet rule fails the group at once
)

var groupShapes = []groupShape{gRecreate, gBlocking, gRestartJob, gDependsOn, gSuccessAny, gSuspend, gInPlace, gScale, gFailGroup}

// chaosGroup is one JobSet of the group chaos run: a leader role of one child and
// a workers role, every child Indexed with backoffLimit 0 (a failed pod fails its
// child).
type chaosGroup struct {
	Name         string
	Shape        groupShape
	Workers      int32 // the workers' replicas
	Pods         int32 // each worker child's parallelism and completions
	LeaderRunFor time.Duration
	WorkerRunFor time.Duration
	// FailIndex is the worker child whose pods fail while its restart attempts
	// (the group's plus its own) are below FailRestarts; 0 fails nothing.
	FailIndex, FailRestarts int32
	MaxRestarts             int32
	DependsOn               string // Ready or Complete (gDependsOn)
	ScaleTo                 int32  // the workers' replicas after the change (gScale)
	At                      time.Duration
	// ActAfter is when the driver suspends or scales the group, from its creation;
	// ResumeAfter when it resumes it, from the suspension.
	ActAfter, ResumeAfter time.Duration
}

func (g chaosGroup) gvr() schema.GroupVersionResource {
	if g.Shape == gScale {
		return gvrUpstreamJobSets
	}
	return gvrExampleJobSets
}

// restartsGroup says whether the group's failures restart the whole group.
func (g chaosGroup) restartsGroup() bool { return g.Shape == gRecreate || g.Shape == gBlocking }

// wantFailed says whether the group must end Failed: more failures than restarts
// allowed (ReachedMaxRestarts), or a FailJobSet rule matched.
func (g chaosGroup) wantFailed() bool {
	return g.restartsGroup() && g.FailRestarts > g.MaxRestarts || g.Shape == gFailGroup
}

// wantReason is the reason of the Failed condition the group must end with.
func (g chaosGroup) wantReason() string {
	switch {
	case g.Shape == gFailGroup:
		return "FailJobSetFailurePolicyAction"
	case g.wantFailed():
		return "ReachedMaxRestarts"
	}
	return ""
}

// wantRestarts is status.restarts at the end.
func (g chaosGroup) wantRestarts() int32 {
	if g.restartsGroup() {
		return min(g.FailRestarts, g.MaxRestarts)
	}
	return 0
}

// wantWorkers is the workers' replicas at the end.
func (g chaosGroup) wantWorkers() int32 {
	if g.Shape == gScale {
		return g.ScaleTo
	}
	return g.Workers
}

// groupPlan draws n groups from seed, created over spread: every shape in turn.
func groupPlan(seed uint64, n int, spread time.Duration) []chaosGroup {
	r := rand.New(rand.NewPCG(seed, 0x67726f757073))
	dur := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(r.Int64N(int64(hi-lo)+1)) }
	out := make([]chaosGroup, n)
	for i := range out {
		s := groupShapes[i%len(groupShapes)]
		g := chaosGroup{Name: fmt.Sprintf("g%03d-%s", i, s), Shape: s, Workers: int32(1 + r.IntN(4)), Pods: int32(1 + r.IntN(3)),
			LeaderRunFor: dur(500*time.Millisecond, 3*time.Second), WorkerRunFor: dur(time.Second, 4*time.Second),
			MaxRestarts: 2, At: dur(0, spread)}
		switch s {
		case gRecreate, gBlocking:
			g.FailIndex, g.FailRestarts = int32(r.IntN(int(g.Workers))), int32(1+r.IntN(3)) // 3: one past maxRestarts
		case gRestartJob:
			g.MaxRestarts = 3
			g.FailIndex, g.FailRestarts = int32(r.IntN(int(g.Workers))), int32(1+r.IntN(2))
		case gDependsOn:
			g.DependsOn = []string{"Ready", "Complete"}[r.IntN(2)]
		case gSuccessAny:
			g.WorkerRunFor = 10 * time.Minute // only the leader's success ends them
		case gSuspend:
			g.WorkerRunFor = dur(3*time.Second, 6*time.Second)
			g.ActAfter, g.ResumeAfter = dur(time.Second, 3*time.Second), dur(time.Second, 4*time.Second)
		case gInPlace:
			g.LeaderRunFor, g.WorkerRunFor = 45*time.Second, 45*time.Second // ended by the agents' dance, then run out
		case gFailGroup:
			g.FailIndex, g.FailRestarts = int32(r.IntN(int(g.Workers))), 1
		case gScale:
			g.Workers = int32(2 + r.IntN(3))
			g.ScaleTo = int32(1 + r.IntN(5))
			if g.ScaleTo == g.Workers {
				g.ScaleTo++
			}
			g.WorkerRunFor = dur(6*time.Second, 10*time.Second)
			g.ActAfter = dur(2*time.Second, 4*time.Second)
		}
		out[i] = g
	}
	return out
}

// smokeGroups is the smoke's one group: a worker of two fails once, one restart.
func smokeGroups() []chaosGroup {
	return []chaosGroup{{Name: "smoke-recreate", Shape: gRecreate, Workers: 2, Pods: 2, LeaderRunFor: 2 * time.Second,
		WorkerRunFor: 3 * time.Second, FailIndex: 1, FailRestarts: 1, MaxRestarts: 2}}
}

// role is one replicatedJob of the JSON the API server takes.
type jsRole struct {
	Name      string                  `json:"name"`
	Replicas  int32                   `json:"replicas"`
	DependsOn []map[string]string     `json:"dependsOn,omitempty"`
	Template  batchv1.JobTemplateSpec `json:"template"`
}

// object is the JobSet of g in namespace, its pods on node.
func (g chaosGroup) object(namespace, node string) (*unstructured.Unstructured, error) {
	inPlace := g.Shape == gInPlace
	template := func(runFor time.Duration, pods int32, fail bool) batchv1.JobTemplateSpec {
		labels := map[string]string{labelGroupChaos: g.Name}
		ann := map[string]string{annotationRunFor: runFor.String()}
		if fail && g.FailRestarts > 0 {
			ann[annotationExitCode] = strconv.Itoa(chaosPlainFailCode)
			ann[annotationFailJobIndex] = strconv.Itoa(int(g.FailIndex))
			ann[annotationFailRestarts] = strconv.Itoa(int(g.FailRestarts))
		}
		t := batchv1.JobTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: batchv1.JobSpec{
				CompletionMode: ptr.To(batchv1.IndexedCompletion),
				Completions:    ptr.To(pods), Parallelism: ptr.To(pods),
				BackoffLimit: ptr.To[int32](0),
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: ann},
					Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyNever, NodeName: node,
						TerminationGracePeriodSeconds: ptr.To[int64](0),
						Containers:                    []corev1.Container{{Name: "main", Image: "registry.invalid/fake:1"}},
					},
				},
			},
		}
		if inPlace {
			t.Spec.BackoffLimit, t.Spec.PodReplacementPolicy = ptr.To[int32](math.MaxInt32), ptr.To(batchv1.Failed)
			t.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		}
		return t
	}
	workers := jsRole{Name: "workers", Replicas: g.Workers, Template: template(g.WorkerRunFor, g.Pods, true)}
	if g.DependsOn != "" {
		workers.DependsOn = []map[string]string{{"name": "leader", "status": g.DependsOn}}
	}
	spec := map[string]any{"replicatedJobs": []jsRole{{Name: "leader", Replicas: 1, Template: template(g.LeaderRunFor, 1, false)}, workers}}
	switch g.Shape {
	case gRecreate:
		spec["failurePolicy"] = map[string]any{"maxRestarts": g.MaxRestarts, "restartStrategy": "Recreate"}
	case gBlocking:
		spec["failurePolicy"] = map[string]any{"maxRestarts": g.MaxRestarts, "restartStrategy": "BlockingRecreate"}
	case gRestartJob:
		spec["failurePolicy"] = map[string]any{"maxRestarts": g.MaxRestarts,
			"rules": []map[string]any{{"name": "worker", "action": "RestartJob", "targetReplicatedJobs": []string{"workers"}}}}
	case gFailGroup:
		spec["failurePolicy"] = map[string]any{"maxRestarts": g.MaxRestarts,
			"rules": []map[string]any{{"name": "worker", "action": "FailJobSet", "targetReplicatedJobs": []string{"workers"}}}}
	case gSuccessAny:
		spec["successPolicy"] = map[string]any{"operator": "Any", "targetReplicatedJobs": []string{"leader"}}
	case gInPlace:
		spec["failurePolicy"] = map[string]any{"maxRestarts": 3, "restartStrategy": "InPlaceRestart"}
	}
	gvr := g.gvr()
	obj := map[string]any{
		"apiVersion": gvr.GroupVersion().String(), "kind": "JobSet",
		"metadata": map[string]any{"name": g.Name, "namespace": namespace, "labels": map[string]string{labelGroupChaos: g.Name}},
		"spec":     spec,
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	dropNulls(m)
	return &unstructured.Unstructured{Object: m}, nil
}

// dropNulls removes the null values (an empty creationTimestamp) from m.
func dropNulls(m map[string]any) {
	for k, v := range m {
		switch v := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			dropNulls(v)
		case []any:
			for _, e := range v {
				if em, ok := e.(map[string]any); ok {
					dropNulls(em)
				}
			}
		}
	}
}
