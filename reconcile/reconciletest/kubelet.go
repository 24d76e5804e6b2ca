package reconciletest

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// nodeName is the node the Kubelet runs pods on.
const nodeName = "sim-node"

// Kubelet moves pods through their phases on command: Pending → Running (Run) →
// Ready (SetReady) → Succeeded or Failed (Succeed, Fail, Evict), with container
// restarts (RestartContainer) and the end of graceful deletions (Step,
// FinishTermination). Each command is one status write, with a new resourceVersion
// and a watch event. Commands on a pod that cannot make the move (not found, already
// finished...) return an error and change nothing. Step applies a script to every
// pod, in creation order; nothing happens on its own, so runs are reproducible.
type Kubelet struct {
	c *Cluster

	script func(k *Kubelet, pod *corev1.Pod) error
	// honourGrace, when set, waits for the grace period of a deleted pod before
	// finishing its termination.
	honourGrace bool
}

// SetScript sets the script Step applies (nil: none): what the Kubelet does to one
// pod during a Step. It calls the Kubelet's commands for pod (a copy of the stored
// pod, which the script may keep); an error stops the Step. SucceedPods and
// FailFirst make the usual ones.
func (k *Kubelet) SetScript(s func(k *Kubelet, pod *corev1.Pod) error) {
	k.c.mu.Lock()
	defer k.c.mu.Unlock()
	k.script = s
}

// HonourGracePeriod makes Step finish the termination of a deleted pod only once its
// deletionTimestamp (now plus the grace period at deletion) has passed; by default a
// deleted pod stops at the next Step, as a container that exits on SIGTERM does.
func (k *Kubelet) HonourGracePeriod(on bool) {
	k.c.mu.Lock()
	defer k.c.mu.Unlock()
	k.honourGrace = on
}

// Step finishes the terminations that are due (see HonourGracePeriod), then applies
// the script to every remaining pod in creation order.
func (k *Kubelet) Step() error {
	c := k.c
	c.mu.Lock()
	now := c.clock.Now()
	var due []types.NamespacedName
	for _, p := range c.sortedPodsLocked("") {
		if p.DeletionTimestamp == nil || (p.DeletionGracePeriodSeconds != nil && *p.DeletionGracePeriodSeconds == 0) {
			continue
		}
		if k.honourGrace && now.Before(p.DeletionTimestamp.Time) {
			continue
		}
		due = append(due, key(p.Namespace, p.Name))
	}
	script := k.script
	c.mu.Unlock()
	for _, n := range due {
		if err := k.FinishTermination(n.Namespace, n.Name); err != nil {
			return err
		}
	}
	if script == nil {
		return nil
	}
	for _, p := range c.ListPods("") {
		if err := script(k, p); err != nil {
			return fmt.Errorf("kubelet script on pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	return nil
}

// update applies f to a copy of the stored pod and writes it.
func (k *Kubelet) update(namespace, name, verb string, f func(pod *corev1.Pod, now metav1.Time) error) error {
	c := k.c
	c.mu.Lock()
	defer c.mu.Unlock()
	cur, ok := c.pods[key(namespace, name)]
	if !ok {
		return fmt.Errorf("kubelet %s: pod %s/%s not found", verb, namespace, name)
	}
	pod := cur.DeepCopy()
	if err := f(pod, c.now()); err != nil {
		return fmt.Errorf("kubelet %s: pod %s/%s: %w", verb, namespace, name, err)
	}
	// The kubelet confirms the deletion of a pod that reached a terminal phase.
	if pod.DeletionTimestamp != nil && isTerminal(pod) {
		zero := int64(0)
		pod.DeletionGracePeriodSeconds = &zero
	}
	c.storePodLocked(pod)
	return nil
}

func setCondition(pod *corev1.Pod, t corev1.PodConditionType, status corev1.ConditionStatus, reason string, now metav1.Time) {
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		if c.Type == t {
			if c.Status != status {
				c.LastTransitionTime = now
			}
			c.Status, c.Reason = status, reason
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: t, Status: status, Reason: reason, LastTransitionTime: now})
}

func containerNames(pod *corev1.Pod) []string {
	names := make([]string, 0, len(pod.Spec.Containers))
	for _, ct := range pod.Spec.Containers {
		names = append(names, ct.Name)
	}
	if len(names) == 0 {
		names = []string{"main"}
	}
	return names
}

// Run starts a Pending pod: it is bound to the node "sim-node", gets phase Running, a start
// time and running containers, and is not ready yet.
func (k *Kubelet) Run(namespace, name string) error {
	return k.update(namespace, name, "run", func(pod *corev1.Pod, now metav1.Time) error {
		if pod.Status.Phase != corev1.PodPending {
			return fmt.Errorf("phase is %s, not Pending", pod.Status.Phase)
		}
		if pod.DeletionTimestamp != nil {
			return fmt.Errorf("being deleted")
		}
		pod.Spec.NodeName = nodeName
		pod.Status.Phase = corev1.PodRunning
		pod.Status.StartTime = &now
		pod.Status.ContainerStatuses = nil
		for _, n := range containerNames(pod) {
			pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: n, Started: ptrTo(true),
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
			})
		}
		setCondition(pod, corev1.PodScheduled, corev1.ConditionTrue, "", now)
		setCondition(pod, corev1.PodInitialized, corev1.ConditionTrue, "", now)
		setCondition(pod, corev1.ContainersReady, corev1.ConditionFalse, "ContainersNotReady", now)
		setCondition(pod, corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady", now)
		return nil
	})
}

// SetReady sets the Ready condition of a Running pod.
func (k *Kubelet) SetReady(namespace, name string, ready bool) error {
	return k.update(namespace, name, "set ready", func(pod *corev1.Pod, now metav1.Time) error {
		if pod.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase is %s, not Running", pod.Status.Phase)
		}
		status, reason := corev1.ConditionFalse, "ContainersNotReady"
		if ready {
			status, reason = corev1.ConditionTrue, ""
		}
		for i := range pod.Status.ContainerStatuses {
			pod.Status.ContainerStatuses[i].Ready = ready
		}
		setCondition(pod, corev1.ContainersReady, status, reason, now)
		setCondition(pod, corev1.PodReady, status, reason, now)
		return nil
	})
}

// terminate ends every container of pod with exitCode and sets phase.
func terminate(pod *corev1.Pod, phase corev1.PodPhase, exitCode int32, reason string, now metav1.Time) error {
	if isTerminal(pod) {
		return fmt.Errorf("already %s", pod.Status.Phase)
	}
	if pod.Status.StartTime == nil {
		pod.Status.StartTime = &now
	}
	statuses := pod.Status.ContainerStatuses
	if len(statuses) == 0 {
		for _, n := range containerNames(pod) {
			statuses = append(statuses, corev1.ContainerStatus{Name: n})
		}
	}
	for i := range statuses {
		s := &statuses[i]
		started := now
		if s.State.Running != nil {
			started = s.State.Running.StartedAt
		}
		s.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: exitCode, Reason: reason, StartedAt: started, FinishedAt: now,
		}}
		s.Ready, s.Started = false, ptrTo(false)
	}
	pod.Status.ContainerStatuses = statuses
	pod.Status.Phase = phase
	setCondition(pod, corev1.ContainersReady, corev1.ConditionFalse, "PodCompleted", now)
	setCondition(pod, corev1.PodReady, corev1.ConditionFalse, "PodCompleted", now)
	return nil
}

// Succeed ends a pod with every container exiting 0: phase Succeeded.
func (k *Kubelet) Succeed(namespace, name string) error {
	return k.update(namespace, name, "succeed", func(pod *corev1.Pod, now metav1.Time) error {
		return terminate(pod, corev1.PodSucceeded, 0, "Completed", now)
	})
}

// Fail ends a pod with every container exiting with exitCode (non-zero): phase
// Failed.
func (k *Kubelet) Fail(namespace, name string, exitCode int32) error {
	if exitCode == 0 {
		return fmt.Errorf("kubelet fail: pod %s/%s: exit code 0 is a success", namespace, name)
	}
	return k.update(namespace, name, "fail", func(pod *corev1.Pod, now metav1.Time) error {
		return terminate(pod, corev1.PodFailed, exitCode, "Error", now)
	})
}

// Evict ends a pod as a kubelet under node pressure does: phase Failed, reason
// Evicted, a DisruptionTarget condition (reason TerminationByKubelet) and containers
// killed with exit code 137.
func (k *Kubelet) Evict(namespace, name string) error {
	return k.update(namespace, name, "evict", func(pod *corev1.Pod, now metav1.Time) error {
		if err := terminate(pod, corev1.PodFailed, 137, "Error", now); err != nil {
			return err
		}
		pod.Status.Reason = "Evicted"
		pod.Status.Message = "The node was low on resource: memory."
		setCondition(pod, corev1.DisruptionTarget, corev1.ConditionTrue, "TerminationByKubelet", now)
		return nil
	})
}

// RestartContainer restarts the first container of a Running pod after it exited
// with code 1: its restartCount goes up by one and it runs again. Pods with
// restartPolicy Never do not restart containers; use Fail.
func (k *Kubelet) RestartContainer(namespace, name string) error {
	return k.update(namespace, name, "restart container", func(pod *corev1.Pod, now metav1.Time) error {
		if pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
			return fmt.Errorf("restartPolicy is Never")
		}
		if pod.Status.Phase != corev1.PodRunning || len(pod.Status.ContainerStatuses) == 0 {
			return fmt.Errorf("phase is %s, not Running", pod.Status.Phase)
		}
		s := &pod.Status.ContainerStatuses[0]
		started := now
		if s.State.Running != nil {
			started = s.State.Running.StartedAt
		}
		s.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 1, Reason: "Error", StartedAt: started, FinishedAt: now,
		}}
		s.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
		s.RestartCount++
		s.Ready = false
		setCondition(pod, corev1.ContainersReady, corev1.ConditionFalse, "ContainersNotReady", now)
		setCondition(pod, corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady", now)
		return nil
	})
}

// FinishTermination ends the graceful deletion of a pod: a pod that had not finished
// is killed (phase Failed, exit code 137), and the kubelet confirms the deletion, so
// the pod disappears once it has no finalizer left.
func (k *Kubelet) FinishTermination(namespace, name string) error {
	return k.update(namespace, name, "finish termination", func(pod *corev1.Pod, now metav1.Time) error {
		if pod.DeletionTimestamp == nil {
			return fmt.Errorf("not being deleted")
		}
		if !isTerminal(pod) {
			_ = terminate(pod, corev1.PodFailed, 137, "Error", now)
		}
		zero := int64(0)
		pod.DeletionGracePeriodSeconds = &zero
		return nil
	})
}

func ptrTo[T any](v T) *T { return &v }

// SucceedPods is a script (Kubelet.SetScript) that starts each Pending pod as ready, and makes each
// Running pod succeed at the next Step.
func SucceedPods() func(k *Kubelet, pod *corev1.Pod) error {
	return func(k *Kubelet, pod *corev1.Pod) error {
		return advance(k, pod, func() error { return k.Succeed(pod.Namespace, pod.Name) })
	}
}

// FailFirst is a script like SucceedPods whose first n pods to finish fail with
// exitCode; a negative n fails every pod.
func FailFirst(n int, exitCode int32) func(k *Kubelet, pod *corev1.Pod) error {
	failed := 0
	return func(k *Kubelet, pod *corev1.Pod) error {
		return advance(k, pod, func() error {
			if n < 0 || failed < n {
				failed++
				return k.Fail(pod.Namespace, pod.Name, exitCode)
			}
			return k.Succeed(pod.Namespace, pod.Name)
		})
	}
}

// advance starts a Pending pod (ready at once) or finishes a Running one with end;
// pods being deleted or finished are left alone.
func advance(k *Kubelet, pod *corev1.Pod, end func() error) error {
	if pod.DeletionTimestamp != nil {
		return nil
	}
	switch pod.Status.Phase {
	case corev1.PodPending:
		if err := k.Run(pod.Namespace, pod.Name); err != nil {
			return err
		}
		return k.SetReady(pod.Namespace, pod.Name, true)
	case corev1.PodRunning:
		return end()
	}
	return nil
}
