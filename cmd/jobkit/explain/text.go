package explain

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// MaxPodsPerClass caps the pods the text output names per class; the JSON and
// YAML outputs list them all.
const MaxPodsPerClass = 20

// Text writes the report for a human.
func (r *Report) Text(w io.Writer) error {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	j := r.Job
	shape := j.Mode
	if j.Completions != nil {
		shape += fmt.Sprintf(", completions %d", *j.Completions)
	} else {
		shape += ", no completions (work queue)"
	}
	shape += fmt.Sprintf(", parallelism %d", j.Parallelism)
	if j.Suspended {
		shape += ", suspended"
	}
	if j.Deleting {
		shape += ", being deleted"
	}
	if j.Finished != "" {
		shape += ", finished: " + j.Finished
	}
	noun := r.noun()
	line("%s %s/%s (%s)", noun, j.Namespace, j.Name, shape)
	if j.Kind != "" {
		line("owner kind %s %s, pods tracked by finalizer %s", j.APIVersion, j.Kind, j.Finalizer)
	}
	managed := j.ManagedBy
	if managed == "" {
		managed = "unset"
	}
	line("planned as controller %q (spec.managedBy %s) at %s", r.Controller, managed, r.Now.Format(time.RFC3339))
	for _, a := range r.Assumed {
		line("assuming %s", a)
	}

	line("")
	line("Pods (%d):", len(r.Pods))
	for _, cl := range Classes {
		var names []string
		for _, p := range r.Pods {
			for _, pc := range p.Classes {
				if pc == cl {
					names = append(names, podText(p, cl))
				}
			}
		}
		if len(names) == 0 {
			continue
		}
		line("  %s (%d):", cl, len(names))
		for i, n := range names {
			if i == MaxPodsPerClass {
				line("    ... and %d more", len(names)-MaxPodsPerClass)
				break
			}
			line("    %s", n)
		}
	}

	line("")
	if r.Skip != "" {
		line("The controller skips this %s: %s", noun, r.Skip)
	} else if len(r.Decisions) == 0 {
		line("Decisions: none")
	} else {
		line("Decisions (in execution order):")
		for _, d := range r.Decisions {
			line("  %s", decisionText(d))
		}
	}

	if r.Skip == "" {
		line("")
		if len(r.StatusChanges) == 0 {
			line("Status: unchanged")
		} else {
			line("Status changes:")
			for _, c := range r.StatusChanges {
				line("  %s: %s -> %s", c.Field, orUnset(c.From), orUnset(c.To))
			}
		}
		line("")
		if r.Requeue != nil {
			line("Next sync: in %s (%s)", r.Requeue.After, r.Requeue.Reason)
		} else {
			line("Next sync: on the next change of the %s or its pods", noun)
		}
		if len(r.IndexBackoff) > 0 && r.Requeue == nil {
			// No requeue: the indexes also wait for a slot of parallelism.
			line("Per-index backoff (each replacement also waits for a free slot of parallelism %d):", j.Parallelism)
		}
		for _, w := range r.IndexBackoff {
			line("  index %d: per-index backoff after %d failure(s), %s left", w.Index, w.Failures, w.Remaining)
		}
	}

	if len(r.Limits) > 0 {
		line("")
		line("Limits:")
		for _, s := range r.Limits {
			line("  %s", s)
		}
	}
	if len(r.Blockers) > 0 {
		line("")
		line("Blocked:")
		for _, s := range r.Blockers {
			line("  - %s", s)
		}
	}
	if len(r.Diagnostics) > 0 {
		line("")
		line("Diagnostics:")
		for _, d := range r.Diagnostics {
			line("  - [%s] %s", d.Kind, d.Message)
		}
	}
	if len(r.Warnings) > 0 {
		line("")
		line("Plan warnings:")
		for _, s := range r.Warnings {
			line("  - %s", s)
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if len(r.Steps) > 0 {
		if _, err := fmt.Fprintf(w, "\nWhat-if: %d sync(s) on the in-memory cluster (reconcile/reconciletest):\n", len(r.Steps)); err != nil {
			return err
		}
		return WriteSteps(w, r.Steps)
	}
	return nil
}

// noun names the owner's kind in the text: "Job" for a batch/v1 Job.
func (r *Report) noun() string {
	if r.Job.Kind == "" {
		return "Job"
	}
	return r.Job.Kind
}

func podText(p Pod, cl Class) string {
	s := p.Name
	var attrs []string
	if p.Index != nil {
		attrs = append(attrs, fmt.Sprintf("index %d", *p.Index))
	}
	if cl == ClassIgnored || cl == ClassReleased || cl == ClassOrphan {
		attrs = append(attrs, p.Phase)
	}
	if p.Finalizer && (cl == ClassIgnored || cl == ClassTerminating) {
		attrs = append(attrs, "finalizer")
	}
	if p.Note != "" && (cl == ClassUncounted || cl == ClassFinalizerLeft || cl == ClassDuplicateIndex || cl == ClassStray || cl == ClassIgnored || cl == ClassReleased || (cl == ClassOrphan && len(p.Classes) == 1)) {
		attrs = append(attrs, p.Note)
	}
	if len(attrs) > 0 {
		s += " (" + strings.Join(attrs, ", ") + ")"
	}
	return s
}

func decisionText(d Decision) string {
	var s string
	switch d.Action {
	case ActionCreate:
		s = "create a pod"
		if d.Index != nil {
			s = fmt.Sprintf("create a pod for index %d", *d.Index)
		}
	case ActionCondition:
		s = "set condition " + d.What
	case ActionEvent:
		s = "record event " + d.What
	case ActionRecord:
		s = "record " + d.What
	default:
		s = d.Action + " " + d.Pod
		if d.What != "" {
			s += ", " + d.What
		}
	}
	return s + ": " + d.Reason
}

func orUnset(s string) string {
	if s == "" {
		return "(unset)"
	}
	return s
}
