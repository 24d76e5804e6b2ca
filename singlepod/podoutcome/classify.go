package podoutcome

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/jobkit/jobkit/internal/podutil"
	plaindl "github.com/jobkit/jobkit/plain/deadlines"
	"k8s.io/apimachinery/pkg/types"
)

// Status reasons that Classify recognises.
const (
	// podReasonEvicted is the status.reason the kubelet sets on a pod it evicted
	// (node pressure, for example).
	podReasonEvicted = "Evicted"
	// podReasonNodeLost is the status.reason set on a pod whose node stopped
	// responding; with a deletionTimestamp it means the pod will not come back.
	podReasonNodeLost = "NodeLost"
	// containerReasonOOMKilled is the terminated reason of a container killed for
	// exceeding its memory limit.
	containerReasonOOMKilled = "OOMKilled"
)

// Outcome is what a single-pod job's pod says about the job.
type Outcome string

// The outcomes, in the order Classify tests them (Succeeded, FalseSuccess and
// Failed are decided by phase after the four unexpected stops).
const (
	// OutcomeEvicted: status.reason is Evicted, in any phase.
	OutcomeEvicted Outcome = "Evicted"
	// OutcomeNodeLost: status.reason is NodeLost and the pod is being deleted.
	OutcomeNodeLost Outcome = "NodeLost"
	// OutcomeOOMKilled: phase Running and a container or init container is
	// currently terminated with reason OOMKilled.
	OutcomeOOMKilled Outcome = "OOMKilled"
	// OutcomeUnknown: phase Unknown (the node stopped reporting).
	OutcomeUnknown Outcome = "Unknown"
	// OutcomeSucceeded: phase Succeeded, and every regular and non-restartable
	// init container terminated with exit code 0 and a finish time.
	OutcomeSucceeded Outcome = "Succeeded"
	// OutcomeFalseSuccess: phase Succeeded, but some container named in
	// Result.Container did not finish as OutcomeSucceeded requires.
	OutcomeFalseSuccess Outcome = "FalseSuccess"
	// OutcomeFailed: phase Failed (for any reason other than eviction).
	OutcomeFailed Outcome = "Failed"
	// OutcomeDeleted: the pod is being deleted (deletionTimestamp set) while
	// not finished, and not for NodeLost: someone or something else deleted it.
	OutcomeDeleted Outcome = "DeletedUnexpectedly"
	// OutcomePending: phase Pending (or empty, the API default).
	OutcomePending Outcome = "Pending"
	// OutcomeRunning: phase Running.
	OutcomeRunning Outcome = "Running"
	// OutcomeOtherPhase: a phase this package does not know.
	OutcomeOtherPhase Outcome = "OtherPhase"
)

func (o Outcome) known() bool {
	switch o {
	case OutcomeEvicted, OutcomeNodeLost, OutcomeOOMKilled, OutcomeUnknown, OutcomeSucceeded, OutcomeFalseSuccess,
		OutcomeFailed, OutcomeDeleted, OutcomePending, OutcomeRunning, OutcomeOtherPhase:
		return true
	}
	return false
}

// Result is the classification of one pod.
type Result struct {
	// Outcome is what the pod says about the job.
	Outcome Outcome
	// Container is the container involved, if any: the one that was
	// OOM-killed, did not finish (FalseSuccess), or failed (Failed).
	Container string
	// Message says in words what happened to the pod.
	Message string
	// PodUID is the pod's UID, so that a revival can be tied to its pod.
	PodUID types.UID
	// Terminating reports whether the pod has a deletionTimestamp, so that
	// a step does not ask to delete it again.
	Terminating bool
}

// Classify says what pod tells about its single-pod job. The first rule that
// matches wins:
//
//  1. status.reason Evicted: OutcomeEvicted.
//  2. status.reason NodeLost and a deletionTimestamp: OutcomeNodeLost.
//  3. phase Running and a container or init container (sidecars included)
//     whose current state is terminated with reason OOMKilled: OutcomeOOMKilled.
//  4. phase Unknown: OutcomeUnknown.
//  5. phase Succeeded: OutcomeSucceeded if every regular container and every
//     non-restartable init container, in the spec and in the status, has
//     terminated with exit code 0 and a finish time; else OutcomeFalseSuccess
//     naming the first that did not. Sidecars (init containers with
//     restartPolicy Always) may end any way.
//  6. phase Failed: OutcomeFailed, naming the first non-restartable init
//     container, else regular container, that exited with a non-zero code.
//  7. a deletionTimestamp: OutcomeDeleted.
//  8. phase Pending or empty: OutcomePending; Running: OutcomeRunning;
//     anything else: OutcomeOtherPhase.
//
// A missing pod is not an outcome: the caller creates it (plank recreates a
// pending job's missing pod at once, without a concurrency check). A nil pod
// is an error matching plaindl.ErrInvalidInput (package plain/deadlines).
// Classify is O(containers²) in the worst case (a status listed out of spec
// order), O(containers) normally, and does not modify pod.
func Classify(pod *corev1.Pod) (Result, error) {
	if pod == nil {
		return Result{}, &plaindl.FieldError{Package: "podoutcome", Field: "pod", Value: "nil", Reason: "a pod is required; a missing pod is recreated, not classified"}
	}
	r := Result{PodUID: pod.UID, Terminating: pod.DeletionTimestamp != nil}
	st := &pod.Status
	switch {
	case st.Reason == podReasonEvicted:
		r.Outcome, r.Message = OutcomeEvicted, withDetail("pod was evicted", st.Message)
		return r, nil
	case st.Reason == podReasonNodeLost && r.Terminating:
		r.Outcome, r.Message = OutcomeNodeLost, withDetail("pod's node was lost", st.Message)
		return r, nil
	case st.Phase == corev1.PodRunning:
		if name, init := oomKilled(pod); name != "" {
			r.Outcome, r.Container = OutcomeOOMKilled, name
			r.Message = fmt.Sprintf("%s %q was OOM-killed while the pod was running", kind(init), name)
			return r, nil
		}
	case st.Phase == corev1.PodUnknown:
		r.Outcome, r.Message = OutcomeUnknown, withDetail("pod's state is unknown", st.Message)
		return r, nil
	case st.Phase == corev1.PodSucceeded:
		if name, problem := unfinished(pod); name != "" {
			r.Outcome, r.Container, r.Message = OutcomeFalseSuccess, name, problem
			return r, nil
		}
		r.Outcome, r.Message = OutcomeSucceeded, "every container exited with code 0"
		return r, nil
	case st.Phase == corev1.PodFailed:
		r.Outcome = OutcomeFailed
		if name, msg := failedContainer(pod); name != "" {
			r.Container, r.Message = name, msg
		} else {
			r.Message = withDetail("pod failed", st.Message)
		}
		return r, nil
	}
	if r.Terminating {
		r.Outcome = OutcomeDeleted
		r.Message = fmt.Sprintf("pod is being deleted in phase %q", phaseOrDefault(st.Phase))
		return r, nil
	}
	switch st.Phase {
	case corev1.PodPending, "":
		r.Outcome, r.Message = OutcomePending, "pod is pending"
	case corev1.PodRunning:
		r.Outcome, r.Message = OutcomeRunning, "pod is running"
	default:
		r.Outcome, r.Message = OutcomeOtherPhase, fmt.Sprintf("pod is in unrecognised phase %q", st.Phase)
	}
	return r, nil
}

func phaseOrDefault(p corev1.PodPhase) corev1.PodPhase {
	if p == "" {
		return corev1.PodPending
	}
	return p
}

func withDetail(what, detail string) string {
	if detail == "" {
		return what
	}
	return what + ": " + detail
}

func kind(init bool) string {
	if init {
		return "init container"
	}
	return "container"
}

// oomKilled returns the first container (init containers first) whose current
// state is terminated with reason OOMKilled.
func oomKilled(pod *corev1.Pod) (name string, init bool) {
	for i := range pod.Status.InitContainerStatuses {
		if t := pod.Status.InitContainerStatuses[i].State.Terminated; t != nil && t.Reason == containerReasonOOMKilled {
			return pod.Status.InitContainerStatuses[i].Name, true
		}
	}
	for i := range pod.Status.ContainerStatuses {
		if t := pod.Status.ContainerStatuses[i].State.Terminated; t != nil && t.Reason == containerReasonOOMKilled {
			return pod.Status.ContainerStatuses[i].Name, false
		}
	}
	return "", false
}

// unfinished returns the first regular or non-restartable init container that
// did not terminate with exit code 0 and a finish time, and what is wrong.
// Statuses are checked first (init containers, then regular ones), then every
// container of the spec must have a status.
func unfinished(pod *corev1.Pod) (name, problem string) {
	const prefix = "pod is in phase Succeeded but "
	for i := range pod.Status.InitContainerStatuses {
		cs := &pod.Status.InitContainerStatuses[i]
		if podutil.IsSidecarStatus(pod, i, cs.Name) {
			continue
		}
		if p := notFinished(cs); p != "" {
			return cs.Name, fmt.Sprintf("%sinit container %q %s", prefix, cs.Name, p)
		}
	}
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		if p := notFinished(cs); p != "" {
			return cs.Name, fmt.Sprintf("%scontainer %q %s", prefix, cs.Name, p)
		}
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if !podutil.RestartsAlways(c) && findStatus(pod.Status.InitContainerStatuses, i, c.Name) == nil {
			return c.Name, fmt.Sprintf("%sinit container %q has no status", prefix, c.Name)
		}
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if findStatus(pod.Status.ContainerStatuses, i, c.Name) == nil {
			return c.Name, fmt.Sprintf("%scontainer %q has no status", prefix, c.Name)
		}
	}
	return "", ""
}

func notFinished(cs *corev1.ContainerStatus) string {
	t := cs.State.Terminated
	switch {
	case t == nil:
		return "has not terminated"
	case t.ExitCode != 0:
		return fmt.Sprintf("exited with code %d", t.ExitCode)
	case t.FinishedAt.IsZero():
		return "terminated without a finish time"
	}
	return ""
}

// failedContainer returns the first non-restartable init container, else the
// first regular container, that terminated with a non-zero exit code.
func failedContainer(pod *corev1.Pod) (name, msg string) {
	for i := range pod.Status.InitContainerStatuses {
		cs := &pod.Status.InitContainerStatuses[i]
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 && !podutil.IsSidecarStatus(pod, i, cs.Name) {
			return cs.Name, exitMessage("init container", cs.Name, t)
		}
	}
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			return cs.Name, exitMessage("container", cs.Name, t)
		}
	}
	return "", ""
}

func exitMessage(kind, name string, t *corev1.ContainerStateTerminated) string {
	if t.Reason == "" {
		return fmt.Sprintf("%s %q exited with code %d", kind, name, t.ExitCode)
	}
	return fmt.Sprintf("%s %q exited with code %d (%s)", kind, name, t.ExitCode, t.Reason)
}

// findStatus returns the status named name, trying position i first.
func findStatus(statuses []corev1.ContainerStatus, i int, name string) *corev1.ContainerStatus {
	if i < len(statuses) && statuses[i].Name == name {
		return &statuses[i]
	}
	for j := range statuses {
		if statuses[j].Name == name {
			return &statuses[j]
		}
	}
	return nil
}
