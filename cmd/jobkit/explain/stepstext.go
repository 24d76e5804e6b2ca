package explain

import (
	"fmt"
	"io"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// callText writes a call of the log on one line; noun names the kind of a Task
// whose status the call writes.
func callText(c reconciletest.Call, noun string) string {
	s := string(c.Op) + " " + c.Name
	switch c.Op {
	case reconciletest.OpCreatePod:
		if c.Pod != nil {
			if ix, ok := c.Pod.Annotations[batchv1.JobCompletionIndexAnnotation]; ok {
				s += " (index " + ix + ")"
			}
		}
	case reconciletest.OpPatchPod:
		switch patch := string(c.Patch); {
		case strings.Contains(patch, "$deleteFromPrimitiveList/finalizers"):
			s += ": remove the tracking finalizer"
		case strings.Contains(patch, "ownerReferences"):
			s += ": owner reference (adopt or release)"
		default:
			s += " " + strings.TrimSpace(patch)
		}
	case reconciletest.OpUpdateJobStatus:
		if c.Job != nil {
			s += ": " + statusText(&c.Job.Status)
		}
	case reconciletest.OpUpdateStatus:
		s = string(c.Op) + " " + noun + " " + c.Name
		if c.Job != nil {
			s += ": " + statusText(&c.Job.Status)
		}
	}
	if c.Err != nil {
		s += " (error: " + c.Err.Error() + ")"
	}
	return s
}

func statusText(st *batchv1.JobStatus) string {
	s := fmt.Sprintf("active=%d ready=%d terminating=%d succeeded=%d failed=%d",
		st.Active, ptr.Deref(st.Ready, 0), ptr.Deref(st.Terminating, 0), st.Succeeded, st.Failed)
	if st.CompletedIndexes != "" {
		s += fmt.Sprintf(" completedIndexes=%q", st.CompletedIndexes)
	}
	if st.FailedIndexes != nil && *st.FailedIndexes != "" {
		s += fmt.Sprintf(" failedIndexes=%q", *st.FailedIndexes)
	}
	if u := st.UncountedTerminatedPods; u != nil && len(u.Succeeded)+len(u.Failed) > 0 {
		s += fmt.Sprintf(" uncounted=%d", len(u.Succeeded)+len(u.Failed))
	}
	var conds []string
	for _, c := range st.Conditions {
		if c.Status == corev1.ConditionTrue {
			conds = append(conds, string(c.Type))
		}
	}
	if len(conds) > 0 {
		s += " conditions=" + strings.Join(conds, ",")
	}
	return s
}

func phasesText(n map[corev1.PodPhase]int) string {
	var parts []string
	for _, ph := range []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed} {
		if n[ph] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", ph, n[ph]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// WriteSteps writes the steps of a what-if run for a human.
func WriteSteps(w io.Writer, steps []Step) error {
	var b strings.Builder
	for _, s := range steps {
		fmt.Fprintf(&b, "step %d at %s:\n", s.Step, s.Time.Format(time.RFC3339))
		if len(s.Calls) == 0 {
			fmt.Fprintf(&b, "  no API call\n")
		}
		for _, c := range s.Calls {
			fmt.Fprintf(&b, "  %s\n", c)
		}
		if s.Error != "" {
			fmt.Fprintf(&b, "  sync error: %s\n", s.Error)
		}
		if s.Requeue != nil {
			fmt.Fprintf(&b, "  requeue after %s\n", *s.Requeue)
		}
		fmt.Fprintf(&b, "  after the sync and a kubelet step: status %s; pods %s\n", s.Status, s.Pods)
		if s.Finished != "" {
			fmt.Fprintf(&b, "  finished: %s\n", s.Finished)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
