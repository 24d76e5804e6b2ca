package explain

import (
	"context"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/jobkit/jobkit/backoff"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// load creates the owner and its pods in the cluster and brings each pod to its
// state, at the time it reached it, then sets the clock to now and writes the
// owner's status. It returns the owner's namespace and name in the cluster.
func load(cluster *reconciletest.Cluster, tasks *reconciletest.Store[*reconciletest.Task], clk *clocktesting.FakeClock, w *workload, pods []*corev1.Pod, now time.Time) (namespace, name string, err error) {
	earliest := now
	if created := w.job.CreationTimestamp; !created.IsZero() && created.Before(&metav1.Time{Time: earliest}) {
		earliest = created.Time
	}
	var mine []*corev1.Pod
	for _, p := range pods {
		if p == nil || p.Namespace != w.Namespace {
			continue
		}
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.UID != w.UID {
			continue
		}
		mine = append(mine, p)
		if isTerminal(p) {
			if t := backoff.FinishTime(p); t.Before(earliest) {
				earliest = t
			}
		}
	}
	clk.SetTime(earliest)
	stored, err := createOwner(cluster, tasks, w)
	if err != nil {
		return "", "", err
	}
	uids := map[types.UID]types.UID{}
	for _, p := range mine {
		pod := p.DeepCopy()
		pod.ResourceVersion = ""
		for i := range pod.OwnerReferences {
			if pod.OwnerReferences[i].UID == w.UID {
				pod.OwnerReferences[i].UID = stored.UID
			}
		}
		// A Job's selector and template labels were generated anew for its new
		// UID; a Task's were kept, and so are its pods' labels.
		if w.kind == owner.BatchJob {
			for k, v := range pod.Labels {
				if v == string(w.UID) {
					pod.Labels[k] = string(stored.UID)
				}
			}
		}
		created, err := cluster.AddPod(pod)
		if err != nil {
			return "", "", fmt.Errorf("pod %s: %w", p.Name, err)
		}
		uids[p.UID] = created.UID
	}
	// Bring the pods to their phases in the order they finished.
	byFinish := slices.Clone(mine)
	slices.SortStableFunc(byFinish, func(a, b *corev1.Pod) int { return backoff.FinishTime(a).Compare(backoff.FinishTime(b)) })
	k := cluster.Kubelet()
	for _, p := range byFinish {
		if p.Status.Phase == corev1.PodPending || p.Status.Phase == "" {
			continue
		}
		if isTerminal(p) {
			if t := backoff.FinishTime(p); t.After(clk.Now()) && t.Before(now) {
				clk.SetTime(t)
			}
		}
		if err := k.Run(p.Namespace, p.Name); err != nil {
			return "", "", err
		}
		switch {
		case p.Status.Phase == corev1.PodSucceeded:
			err = k.Succeed(p.Namespace, p.Name)
		case p.Status.Phase == corev1.PodFailed:
			err = k.Fail(p.Namespace, p.Name, exitCode(p))
		case isReady(p):
			err = k.SetReady(p.Namespace, p.Name, true)
		}
		if err != nil {
			return "", "", err
		}
	}
	clk.SetTime(now)
	for _, p := range mine {
		if p.DeletionTimestamp != nil && !isTerminal(p) {
			if err := cluster.RemovePod(p.Namespace, p.Name, nil); err != nil {
				return "", "", err
			}
		}
	}
	// The status, with the uncounted UIDs mapped to the new pods.
	status := *w.Status.DeepCopy()
	if u := status.UncountedTerminatedPods; u != nil {
		for _, l := range []*[]types.UID{&u.Succeeded, &u.Failed} {
			for i, uid := range *l {
				if n, ok := uids[uid]; ok {
					(*l)[i] = n
				}
			}
		}
	}
	// The owner is unchanged since its creation: its resourceVersion still holds.
	if _, err := cluster.WriteStatus(context.Background(), stored, status); err != nil {
		return "", "", fmt.Errorf("the %s's status: %w", w.noun, err)
	}
	return stored.Namespace, stored.Name, nil
}

// createOwner creates the owner in the cluster with an empty status (its status
// names pods by UIDs that change when they are loaded): a batch/v1 Job as given,
// or a Task of the cluster's kind with the workload's metadata and its spec in
// Job terms. Both get a new UID and the API's defaults of their spec. The
// Workload returned is the stored owner, for the cluster's WriteStatus.
func createOwner(cluster *reconciletest.Cluster, tasks *reconciletest.Store[*reconciletest.Task], w *workload) (*plan.Workload, error) {
	if w.kind == owner.BatchJob {
		in := w.job.DeepCopy()
		in.UID, in.ResourceVersion, in.Generation = "", "", 0
		in.Status = batchv1.JobStatus{}
		job, err := cluster.Jobs().Create(in)
		if err != nil {
			return nil, err
		}
		return plan.JobWorkload(job), nil
	}
	in := &reconciletest.Task{ObjectMeta: *w.job.ObjectMeta.DeepCopy(), Spec: *w.job.Spec.DeepCopy()}
	in.UID, in.ResourceVersion, in.Generation = "", "", 0
	if w.Deleting && in.DeletionTimestamp == nil {
		// A Workload says that its owner is being deleted, not since when.
		in.DeletionTimestamp = &metav1.Time{Time: cluster.Clock().Now()}
	}
	task, err := tasks.Create(in)
	if err != nil {
		return nil, err
	}
	return task.Workload(), nil
}

// exitCode is the first non-zero exit code of a failed pod's containers, or 1.
func exitCode(p *corev1.Pod) int32 {
	for _, s := range p.Status.ContainerStatuses {
		if t := s.State.Terminated; t != nil && t.ExitCode != 0 {
			return t.ExitCode
		}
	}
	return 1
}
