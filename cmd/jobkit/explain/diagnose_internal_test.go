package explain

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
)

// A plan whose status write the API server would refuse is reported, with
// jobstatus's reason. jobkit's plan does not produce one for any input the tests
// know (the last one, a lowered succeeded counter, was fixed), so the plan here is
// made by hand.
func TestDiagnoseRefusedWrite(t *testing.T) {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j", UID: "u"},
		Spec:       batchv1.JobSpec{Completions: ptr.To[int32](3), Parallelism: ptr.To[int32](1)},
		Status:     batchv1.JobStatus{Succeeded: 2, Failed: 1, StartTime: &metav1.Time{}},
	}
	w := newWorkload(*plan.JobWorkload(job), owner.Kind{})
	p := &plan.Plan{StatusChanged: true, Status: batchv1.JobStatus{Succeeded: 1, Failed: 1, StartTime: &metav1.Time{}}}
	got := diagnose(w, nil, &classification{}, p, batchv1.JobControllerName, true)
	var found bool
	for _, d := range got {
		if d.Kind == DiagRefusedWrite {
			found = true
			if !strings.Contains(d.Message, "cannot decrease the succeeded counter") {
				t.Errorf("refused-write message %q does not give the API server's reason", d.Message)
			}
		}
	}
	if !found {
		t.Errorf("diagnose() = %+v, want a %s diagnostic", got, DiagRefusedWrite)
	}

	p.Status.Succeeded = 2
	for _, d := range diagnose(w, nil, &classification{}, p, batchv1.JobControllerName, true) {
		if d.Kind == DiagRefusedWrite {
			t.Errorf("an accepted write is reported as refused: %s", d.Message)
		}
	}
}
