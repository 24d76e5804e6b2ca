package sim

import (
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/jobkit/jobkit/reconcile"
)

// debugSync reports one sync to the world's debug function: the action, the
// cached Job, the plan, and the calls made.
func (w *world) debugSync(job *batchv1.Job, res reconcile.Result, err error) {
	s := fmt.Sprintf("%d %s (sync %d)", w.acting, w.cur, w.syncs+1)
	if job != nil {
		s += fmt.Sprintf(" cached job rv=%s suspend=%v %s", job.ResourceVersion, deref(ptrBoolText(job.Spec.Suspend)), statusText(&job.Status))
	}
	if res.Plan != nil {
		s += "\n  plan: " + strings.ReplaceAll(res.Plan.String(), "\n", "\n  plan: ")
	}
	if res.Skipped != "" && res.Plan == nil {
		s += "\n  skipped: " + res.Skipped
	}
	if err != nil {
		s += fmt.Sprintf("\n  err: %v", err)
	}
	for _, call := range w.cluster.Calls() {
		s += "\n  call " + call.String()
	}
	w.debug(s)
}

func ptrBoolText(b *bool) *string {
	if b == nil {
		return nil
	}
	s := fmt.Sprint(*b)
	return &s
}
