package explain

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/plan"
)

// decisions lists the plan's actions in execution order.
func decisions(p *plan.Plan) []Decision {
	var out []Decision
	for _, a := range p.Adopt {
		out = append(out, Decision{Action: ActionAdopt, Pod: a.Pod.Name, Reason: a.Reason})
	}
	for _, a := range p.Release {
		out = append(out, Decision{Action: ActionRelease, Pod: a.Pod.Name, Reason: a.Reason})
	}
	if rs := p.RecordStatus; rs != nil {
		var ns, nf int
		if u := rs.UncountedTerminatedPods; u != nil {
			ns, nf = len(u.Succeeded), len(u.Failed)
		}
		what := fmt.Sprintf("status.uncountedTerminatedPods succeeded=%d failed=%d", ns, nf)
		if rs.CompletedIndexes != "" {
			what += fmt.Sprintf(" completedIndexes=%q", rs.CompletedIndexes)
		}
		if rs.FailedIndexes != nil && *rs.FailedIndexes != "" {
			what += fmt.Sprintf(" failedIndexes=%q", *rs.FailedIndexes)
		}
		out = append(out, Decision{Action: ActionRecord, What: what,
			Reason: "finished pods are written to the status before their finalizers go, so each is counted exactly once"})
	}
	for _, a := range p.RemoveFinalizers {
		out = append(out, Decision{Action: ActionRemoveFinalizer, Pod: a.Pod.Name, Reason: a.Reason})
	}
	for _, d := range p.Delete {
		dec := Decision{Action: ActionDelete, Pod: d.Pod.Name, Reason: d.Reason}
		if d.RemoveFinalizerFirst {
			dec.What = "its tracking finalizer removed first, so it is not counted as failed"
		}
		out = append(out, dec)
	}
	for _, cr := range p.Create {
		dec := Decision{Action: ActionCreate, Reason: cr.Reason}
		if cr.Index >= 0 {
			dec.Index = ptr.To(cr.Index)
		}
		if cr.Pod != nil && cr.Pod.GenerateName != "" {
			dec.What = "generateName " + cr.Pod.GenerateName
		}
		out = append(out, dec)
	}
	for _, cc := range p.Conditions {
		out = append(out, Decision{Action: ActionCondition, What: fmt.Sprintf("%s=%s", cc.Type, cc.Status),
			Reason: strings.TrimSpace(cc.Reason + ": " + cc.Message)})
	}
	for _, e := range p.Events {
		out = append(out, Decision{Action: ActionEvent, What: e.Type + " " + e.Reason, Reason: e.Message})
	}
	return out
}

// noteKeptFinalizers says why an uncounted pod keeps its tracking finalizer in this
// sync, when the plan does not remove it.
func noteKeptFinalizers(w *workload, r *Report, p *plan.Plan) {
	removed := map[string]bool{}
	for _, a := range p.RemoveFinalizers {
		removed[a.Pod.Name] = true
	}
	for _, d := range p.Delete {
		if d.RemoveFinalizerFirst {
			removed[d.Pod.Name] = true
		}
	}
	perIndex := w.Spec.BackoffLimitPerIndex != nil
	for i := range r.Pods {
		pod := &r.Pods[i]
		if !slices.Contains(pod.Classes, ClassUncounted) || removed[pod.Name] {
			continue
		}
		switch {
		case perIndex && slices.Contains(pod.Classes, ClassFailed) && pod.Index != nil:
			pod.Note = "keeps its finalizer until its index's replacement exists, which inherits the failure count"
		default:
			pod.Note += "; its finalizer is not removed in this sync"
		}
	}
}
