package scenarios

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/internal/podutil"
)

// nodeName is the node the test kubelet binds pods to. No Node object exists: a
// binding only sets spec.nodeName, which makes the API server delete running pods
// gracefully (a pod without a node is deleted at once).
const nodeName = "scenario-node"

// exitKilled is the exit code of a container killed by SIGKILL.
const exitKilled = 137

// outcome is what the kubelet does with a running pod.
type outcome struct {
	phase    corev1.PodPhase // "" keeps the pod running
	exitCode int32
	evict    bool
}

// succeed is the outcome of a pod that exits 0; the zero outcome keeps a pod running.
var succeed = outcome{phase: corev1.PodSucceeded}

func failWith(code int32) outcome { return outcome{phase: corev1.PodFailed, exitCode: code} }

// kubelet plays the node for the pods of one namespace, through the API only (envtest
// runs no scheduler and no kubelet). Every pollInterval it:
//
//   - binds each new pod to nodeName and makes it Running and Ready;
//   - gives each running pod the outcome its policy returns (once per pod);
//   - ends each terminating pod, unless held: a pod that has not finished is killed
//     (phase Failed, exit code 137), then deleted with grace period 0, so it goes
//     once it has no finalizer left.
//
// Scenarios also drive pods one by one with succeed, fail, evict and release.
type kubelet struct {
	cs kubernetes.Interface
	ns string

	mu       sync.Mutex
	policy   func(*corev1.Pod) outcome
	hold     bool
	finished map[types.UID]bool
}

const pollInterval = 20 * time.Millisecond

func newKubelet(cs kubernetes.Interface, ns string) *kubelet {
	return &kubelet{cs: cs, ns: ns, finished: map[types.UID]bool{}}
}

// setPolicy sets the outcome of running pods; nil keeps them running.
func (k *kubelet) setPolicy(p func(*corev1.Pod) outcome) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.policy = p
}

// holdTerminating makes terminating pods stay as they are (running, with their
// deletionTimestamp) until released, or ends them as a kubelet does.
func (k *kubelet) holdTerminating(on bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.hold = on
}

// run polls the namespace until ctx ends. Errors are transient (a pod deleted or
// changed between the list and the call) and retried at the next poll.
func (k *kubelet) run(ctx context.Context) {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		list, err := k.cs.CoreV1().Pods(k.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		for i := range list.Items {
			k.step(ctx, &list.Items[i])
		}
	}
}

func (k *kubelet) step(ctx context.Context, pod *corev1.Pod) {
	k.mu.Lock()
	hold, policy, done := k.hold, k.policy, k.finished[pod.UID]
	k.mu.Unlock()
	switch {
	case pod.DeletionTimestamp != nil:
		if !hold {
			_ = k.release(ctx, pod)
		}
	case pod.Status.Phase == corev1.PodPending && pod.Spec.NodeName == "":
		_ = k.start(ctx, pod)
	case pod.Status.Phase == corev1.PodRunning && policy != nil && !done:
		if o := policy(pod); o.phase != "" {
			if k.finish(ctx, pod, o) == nil {
				k.mu.Lock()
				k.finished[pod.UID] = true
				k.mu.Unlock()
			}
		}
	}
}

// start binds pod to the node and makes it Running and Ready.
func (k *kubelet) start(ctx context.Context, pod *corev1.Pod) error {
	err := k.cs.CoreV1().Pods(pod.Namespace).Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: nodeName},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsConflict(err) {
		return err
	}
	return k.update(ctx, pod, func(p *corev1.Pod, now metav1.Time) bool {
		if p.Status.Phase != corev1.PodPending || p.DeletionTimestamp != nil {
			return false
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.StartTime = &now
		p.Status.ContainerStatuses = nil
		for _, c := range p.Spec.Containers {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: c.Name, Image: c.Image, ImageID: c.Image, Ready: true, Started: ptr.To(true),
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
			})
		}
		for _, t := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
			setCondition(p, t, corev1.ConditionTrue, "", now)
		}
		return true
	})
}

// finish ends a running pod with o.
func (k *kubelet) finish(ctx context.Context, pod *corev1.Pod, o outcome) error {
	return k.update(ctx, pod, func(p *corev1.Pod, now metav1.Time) bool {
		if podutil.IsTerminal(p) {
			return false
		}
		terminate(p, o, now)
		return true
	})
}

// release ends a terminating pod: killed if it still runs, then deleted with grace
// period 0 (it goes once its finalizers are gone). As a real kubelet, it sends that
// delete again for a pod already at grace 0 whose finalizers are gone: the API
// server does not remove a pod of grace 0 when its last finalizer goes (a Failed
// pod deleted while it still held one stays, terminating, until then).
func (k *kubelet) release(ctx context.Context, pod *corev1.Pod) error {
	if !podutil.IsTerminal(pod) {
		if err := k.finish(ctx, pod, failWith(exitKilled)); err != nil {
			return err
		}
	}
	if ptr.Deref(pod.DeletionGracePeriodSeconds, 1) == 0 && len(pod.Finalizers) > 0 {
		return nil // the final delete comes once its finalizers are gone
	}
	err := k.cs.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      &metav1.Preconditions{UID: &pod.UID},
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// update applies mutate to the latest version of pod and writes its status, retrying
// on conflicts; mutate returns false to write nothing.
func (k *kubelet) update(ctx context.Context, pod *corev1.Pod, mutate func(*corev1.Pod, metav1.Time) bool) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := k.cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.UID != pod.UID {
			return fmt.Errorf("pod %s/%s was replaced", pod.Namespace, pod.Name)
		}
		if !mutate(cur, metav1.Now()) {
			return nil
		}
		_, err = k.cs.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

// terminate ends every container of p as o says and sets the phase.
func terminate(p *corev1.Pod, o outcome, now metav1.Time) {
	reason := "Completed"
	if o.phase == corev1.PodFailed {
		reason = "Error"
	}
	if p.Status.StartTime == nil {
		p.Status.StartTime = &now
	}
	var statuses []corev1.ContainerStatus
	for _, c := range p.Spec.Containers {
		started := now
		for _, s := range p.Status.ContainerStatuses {
			if s.Name == c.Name && s.State.Running != nil {
				started = s.State.Running.StartedAt
			}
		}
		statuses = append(statuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: c.Image, Started: ptr.To(false),
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: o.exitCode, Reason: reason, StartedAt: started, FinishedAt: now,
			}},
		})
	}
	p.Status.ContainerStatuses = statuses
	p.Status.Phase = o.phase
	setCondition(p, corev1.ContainersReady, corev1.ConditionFalse, "PodCompleted", now)
	setCondition(p, corev1.PodReady, corev1.ConditionFalse, "PodCompleted", now)
	if o.evict {
		p.Status.Reason = "Evicted"
		p.Status.Message = "The node was low on resource: memory."
		setCondition(p, corev1.DisruptionTarget, corev1.ConditionTrue, "TerminationByKubelet", now)
	}
}

func setCondition(p *corev1.Pod, t corev1.PodConditionType, status corev1.ConditionStatus, reason string, now metav1.Time) {
	for i := range p.Status.Conditions {
		c := &p.Status.Conditions[i]
		if c.Type == t {
			if c.Status != status {
				c.LastTransitionTime = now
			}
			c.Status, c.Reason = status, reason
			return
		}
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: t, Status: status, Reason: reason, LastTransitionTime: now})
}
