package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// The sides of the queued benchmark: every one runs Kueue's manager for admission.
const (
	queuedKCM    = "kcm"    // kube-controller-manager's Job controller; Kueue's batch/job integration
	queuedJobkit = "jobkit" // jobkit-clientgo through spec.managedBy; Kueue's batch/job integration
	queuedOwner  = "owner"  // TrainingJobs under examples/kueue's trainingjob-controller --kueue
)

// Kueue's API as the queued benchmark writes and reads it.
var (
	resourceFlavorResource = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "resourceflavors"}
	clusterQueueResource   = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "clusterqueues"}
	localQueueResource     = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "localqueues"}
	workloadResource       = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}
)

const (
	// queuedLabel marks every object of the queued benchmark (its value: the case).
	queuedLabel = "jobkit.dev/bench-queued"
	// queueNameLabel is the label by which Kueue queues an owner in a LocalQueue.
	queueNameLabel = "kueue.x-k8s.io/queue-name"
	// The Kueue objects of the benchmark.
	queuedFlavor       = "bench-flavor"
	queuedClusterQueue = "bench-cluster-queue"
	queuedLocalQueue   = "bench-queue"
	// queuedRunFor is how long each pod runs (kwok's run-for).
	queuedRunFor = "5s"
	// trainingJobKueueFramework is the TrainingJob as an external framework of
	// Kueue's Configuration (Kind.version.group).
	trainingJobKueueFramework = "TrainingJob.v1alpha1.ml.examples.jobkit.dev"
)

// queuedCase is the shape of the queued benchmark: Owners owners of Pods pods each
// (one CPU per pod) through one ClusterQueue whose quota admits Admitted owners at a
// time.
type queuedCase struct {
	Owners, Pods, Admitted int
}

// Name names the case, e.g. queued-50x20-q10.
func (c queuedCase) Name() string {
	return fmt.Sprintf("queued-%dx%d-q%d", c.Owners, c.Pods, c.Admitted)
}

// validate refuses a case that cannot run.
func (c queuedCase) validate() error {
	switch {
	case c.Owners < 1:
		return fmt.Errorf("--owners=%d: must be at least 1", c.Owners)
	case c.Pods < 1:
		return fmt.Errorf("--pods=%d: must be at least 1", c.Pods)
	case c.Admitted < 1:
		return fmt.Errorf("--admitted=%d: must be at least 1", c.Admitted)
	}
	return nil
}

// quota is the ClusterQueue's nominal CPU quota: Admitted owners of Pods pods of one
// CPU each.
func (c queuedCase) quota() int { return c.Admitted * c.Pods }

// podTemplate is every pod: one CPU requested (what Kueue counts against the quota),
// on node, kwok running it for queuedRunFor.
func (c queuedCase) podTemplate(node string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{queuedLabel: c.Name()},
			Annotations: map[string]string{"kwok.jobkit.dev/run-for": queuedRunFor},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			NodeName:                      node,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []corev1.Container{{Name: "main", Image: "registry.invalid/fake:1",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}},
		},
	}
}

// ownerMeta is the metadata of owner name: the case's label and the queue name, as
// Kueue's webhook would require it of a queued owner.
func (c queuedCase) ownerMeta(name, namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace,
		Labels: map[string]string{queuedLabel: c.Name(), queueNameLabel: queuedLocalQueue}}
}

// job is Job name of the case: Pods pods, created suspended (no webhook of Kueue is
// registered, so it is written as Kueue's would leave it), handed to managedBy
// (empty: the Kubernetes Job controller).
func (c queuedCase) job(name, namespace, managedBy, node string) *batchv1.Job {
	j := &batchv1.Job{
		ObjectMeta: c.ownerMeta(name, namespace),
		Spec: batchv1.JobSpec{
			Completions:  ptr.To(int32(c.Pods)),
			Parallelism:  ptr.To(int32(c.Pods)),
			BackoffLimit: ptr.To[int32](6),
			Suspend:      ptr.To(true),
			Template:     c.podTemplate(node),
		},
	}
	if managedBy != "" {
		j.Spec.ManagedBy = ptr.To(managedBy)
	}
	return j
}

// trainingJob is TrainingJob name of the case: Pods workers, no launcher, created
// suspended with the queue name.
func (c queuedCase) trainingJob(name, namespace, node string) (*unstructured.Unstructured, error) {
	tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ptr.To(c.podTemplate(node)))
	if err != nil {
		return nil, err
	}
	delete(tmpl["metadata"].(map[string]any), "creationTimestamp")
	meta, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ptr.To(c.ownerMeta(name, namespace)))
	if err != nil {
		return nil, err
	}
	delete(meta, "creationTimestamp")
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ml.examples.jobkit.dev/v1alpha1",
		"kind":       "TrainingJob",
		"metadata":   meta,
		"spec":       map[string]any{"workers": int64(c.Pods), "suspend": true, "template": tmpl},
	}}, nil
}

// kueueObjects are the ResourceFlavor, the ClusterQueue (its CPU quota: quota) and the
// LocalQueue in namespace, in the order to create them.
func (c queuedCase) kueueObjects(namespace string) []*unstructured.Unstructured {
	obj := func(kind, name string, spec map[string]any) *unstructured.Unstructured {
		meta := map[string]any{"name": name, "labels": map[string]any{queuedLabel: "kueue"}}
		if kind == "LocalQueue" {
			meta["namespace"] = namespace
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": kind, "metadata": meta, "spec": spec}}
	}
	return []*unstructured.Unstructured{
		obj("ResourceFlavor", queuedFlavor, map[string]any{}),
		obj("ClusterQueue", queuedClusterQueue, map[string]any{
			"namespaceSelector": map[string]any{},
			"resourceGroups": []any{map[string]any{
				"coveredResources": []any{"cpu"},
				"flavors": []any{map[string]any{"name": queuedFlavor, "resources": []any{
					map[string]any{"name": "cpu", "nominalQuota": fmt.Sprint(c.quota())}}}},
			}},
		}),
		obj("LocalQueue", queuedLocalQueue, map[string]any{"clusterQueue": queuedClusterQueue}),
	}
}

// kueueConfig is the Configuration of Kueue's manager beside the local control plane:
// no leader election, no internal certificate management (no Secret written, no
// webhook configuration patched), the webhook server on 127.0.0.1:webhookPort with the
// certificate of certDir (none is registered with kube-apiserver), no metrics server,
// the probes on 127.0.0.1:probePort, the visibility server off (it would listen on
// every interface), the client limits; the integrations: batch/job, and the
// TrainingJob as an external framework (its job reconciler runs in
// trainingjob-controller --kueue; Kueue's manager only knows the kind as an owner).
func kueueConfig(webhookPort int, certDir string, probePort int, limits qps) string {
	return fmt.Sprintf(`apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
manageJobsWithoutQueueName: false
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %s
metrics:
  bindAddress: "0"
health:
  healthProbeBindAddress: 127.0.0.1:%d
clientConnection:
  qps: %v
  burst: %d
featureGates:
  VisibilityOnDemand: false
integrations:
  frameworks:
  - batch/job
  externalFrameworks:
  - %s
`, webhookPort, certDir, probePort, limits.QPS, limits.Burst, trainingJobKueueFramework)
}

// admissionRate is the admissions per second of a run: the admissions seen (each
// Workload's first Admitted condition) over the span from the first create call
// (start) to the last admission; 0 without admissions.
func admissionRate(start time.Time, admitted map[string]time.Time) float64 {
	var last time.Time
	for _, t := range admitted {
		if t.After(last) {
			last = t
		}
	}
	span := last.Sub(start).Seconds()
	if len(admitted) == 0 || span <= 0 {
		return 0
	}
	return float64(len(admitted)) / span
}

// queuedNotController tells the requests no controller of a side makes: kwok's pod
// status updates, the benchmark's create and watch of the owners and its watch of the
// Workloads, and everything outside the owners', pods', Workloads', queues' and
// events' resources.
func queuedNotController(k requestKey) bool {
	switch k.Resource {
	case "pods":
		return k.Subresource == "status"
	case "jobs", "trainingjobs":
		return k.Subresource == "" && (k.Verb == "POST" || k.Verb == "WATCH")
	case "workloads":
		return k.Subresource == "" && k.Verb == "WATCH"
	case "clusterqueues", "localqueues", "resourceflavors", "events":
		return false
	}
	return true
}

// writesLine is the writes of reqs by verb and resource, the most first, e.g.
// "PATCH workloads/status=100 POST pods=1000".
func writesLine(reqs requests) string {
	type kv struct {
		k string
		v float64
	}
	var ws []kv
	for k, v := range reqs {
		if isWrite(k.Verb) && v > 0 {
			ws = append(ws, kv{k.String(), v})
		}
	}
	sort.Slice(ws, func(i, j int) bool {
		if ws[i].v != ws[j].v {
			return ws[i].v > ws[j].v
		}
		return ws[i].k < ws[j].k
	})
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = fmt.Sprintf("%s=%.0f", w.k, w.v)
	}
	return strings.Join(parts, " ")
}
