package main

import (
	"fmt"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// The resources of the groups benchmark.
var (
	jobSetResource      = schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}
	trainingJobResource = schema.GroupVersionResource{Group: "ml.examples.jobkit.dev", Version: "v1alpha1", Resource: "trainingjobs"}
)

const (
	// groupLabel marks every object of the groups benchmark (its value: the case).
	groupLabel = "jobkit.dev/bench-group"
	// attemptLabel is the restart attempt JobSet (and the TrainingJob controller,
	// which keeps JobSet's key) writes on every pod.
	attemptLabel = "jobset.sigs.k8s.io/restart-attempt"
	// groupRunFor is how long a pod of a case that completes runs (kwok's run-for).
	groupRunFor = "5s"
	// restartRunFor keeps the pods of the restart case running well past the
	// measurement: the run ends once the new attempt runs.
	restartRunFor = "30m"
)

// groupCase is one shape of the groups benchmark.
type groupCase struct {
	Name string
	// Leader adds a role of one pod (a JobSet replicatedJob "leader" of one Job of
	// one pod; the TrainingJob's launcher).
	Leader bool
	// Jobs child Jobs of Pods pods each in the replicatedJob "workers".
	Jobs, Pods int
	// Restart: the pods keep running; once all run, the benchmark fails one worker
	// pod (as its kubelet would report an exit code 1) and measures the time until
	// every pod of the new attempt runs. maxRestarts 1, backoffLimit 0.
	Restart bool
}

// groupCases are the cases by name (--group-cases).
var groupCases = map[string]groupCase{
	"leader-64":    {Name: "leader-64", Leader: true, Jobs: 1, Pods: 64},
	"group-100x10": {Name: "group-100x10", Jobs: 100, Pods: 10},
	"restart-1000": {Name: "restart-1000", Jobs: 100, Pods: 10, Restart: true},
	// The test command's smoke size.
	"restart-4x5": {Name: "restart-4x5", Jobs: 4, Pods: 5, Restart: true},
}

const defaultGroupCases = "leader-64,group-100x10,restart-1000"

func parseGroupCases(s string) ([]groupCase, error) {
	var out []groupCase
	for _, name := range strings.Split(s, ",") {
		c, ok := groupCases[strings.TrimSpace(name)]
		if !ok {
			return nil, fmt.Errorf("group case %q: want one of leader-64, group-100x10, restart-1000, restart-4x5", name)
		}
		out = append(out, c)
	}
	return out, nil
}

// workers is the number of worker pods.
func (c groupCase) workers() int { return c.Jobs * c.Pods }

// pods is the number of pods of one attempt.
func (c groupCase) pods() int {
	if c.Leader {
		return c.workers() + 1
	}
	return c.workers()
}

// podTemplate is the pod of every role: on node, kwok running it for runFor.
func (c groupCase) podTemplate(node string) corev1.PodTemplateSpec {
	runFor := groupRunFor
	if c.Restart {
		runFor = restartRunFor
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{groupLabel: c.Name},
			Annotations: map[string]string{"kwok.jobkit.dev/run-for": runFor},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			NodeName:                      node,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers:                    []corev1.Container{{Name: "main", Image: "registry.invalid/fake:1"}},
		},
	}
}

// childJob is the Job template of a replicatedJob of pods pods, its Jobs handed to
// managedBy (empty: the Kubernetes Job controller).
func (c groupCase) childJob(pods int, managedBy, node string) batchv1.JobTemplateSpec {
	t := batchv1.JobTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{groupLabel: c.Name}},
		Spec: batchv1.JobSpec{
			Completions:    ptr.To(int32(pods)),
			Parallelism:    ptr.To(int32(pods)),
			CompletionMode: ptr.To(batchv1.IndexedCompletion),
			BackoffLimit:   ptr.To[int32](0),
			Template:       c.podTemplate(node),
		},
	}
	if managedBy != "" {
		t.Spec.ManagedBy = ptr.To(managedBy)
	}
	return t
}

// jobSet is the case as a JobSet named name whose child Jobs go to childManagedBy.
// Every field JobSet's defaulting webhook sets is set here (successPolicy All,
// startupPolicy AnyOrder, completionMode Indexed, restartPolicy, network with DNS
// hostnames and not-ready addresses published): no webhook is registered, and both
// controllers must see the same JobSet.
func (c groupCase) jobSet(name, namespace, childManagedBy, node string) (*unstructured.Unstructured, error) {
	var rjobs []any
	add := func(rname string, replicas, pods int) error {
		tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ptr.To(c.childJob(pods, childManagedBy, node)))
		if err != nil {
			return err
		}
		delete(tmpl["metadata"].(map[string]any), "creationTimestamp")
		rjobs = append(rjobs, map[string]any{"name": rname, "replicas": int64(replicas), "template": tmpl})
		return nil
	}
	if c.Leader {
		if err := add("leader", 1, 1); err != nil {
			return nil, err
		}
	}
	if err := add("workers", c.Jobs, c.Pods); err != nil {
		return nil, err
	}
	spec := map[string]any{
		"replicatedJobs": rjobs,
		"successPolicy":  map[string]any{"operator": "All"},
		"startupPolicy":  map[string]any{"startupPolicyOrder": "AnyOrder"},
		"network":        map[string]any{"enableDNSHostnames": true, "publishNotReadyAddresses": true},
	}
	if c.Restart {
		spec["failurePolicy"] = map[string]any{"maxRestarts": int64(1)}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "jobset.x-k8s.io/v1alpha2",
		"kind":       "JobSet",
		"metadata":   map[string]any{"name": name, "namespace": namespace, "labels": map[string]any{groupLabel: c.Name}},
		"spec":       spec,
	}}, nil
}

// trainingJob is the case as one owner of the roles' pods: a TrainingJob of
// Jobs*Pods workers (and a launcher for the leader or for a restart, which needs
// one: a worker failing for good restarts the whole group only with a launcher).
func (c groupCase) trainingJob(name, namespace, node string) (*unstructured.Unstructured, error) {
	tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ptr.To(c.podTemplate(node)))
	if err != nil {
		return nil, err
	}
	delete(tmpl["metadata"].(map[string]any), "creationTimestamp")
	spec := map[string]any{"workers": int64(c.workers()), "template": tmpl}
	if c.Leader || c.Restart {
		launcher := runtime.DeepCopyJSON(tmpl)
		spec["launcher"] = map[string]any{"template": launcher}
	}
	if c.Restart {
		spec["maxRestarts"] = int64(1)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ml.examples.jobkit.dev/v1alpha1",
		"kind":       "TrainingJob",
		"metadata":   map[string]any{"name": name, "namespace": namespace, "labels": map[string]any{groupLabel: c.Name}},
		"spec":       spec,
	}}, nil
}

// ownerPods is the number of pods of one attempt under the one owner.
func (c groupCase) ownerPods() int {
	if c.Leader || c.Restart {
		return c.workers() + 1
	}
	return c.workers()
}

// attemptOf is the restart attempt of a pod (its label; 0 without).
func attemptOf(p *corev1.Pod) int {
	n, err := strconv.Atoi(p.Labels[attemptLabel])
	if err != nil {
		return 0
	}
	return n
}
