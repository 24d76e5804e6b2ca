package childjobs_test

import (
	"strconv"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/childjobs"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// FuzzCompute runs Compute over arbitrary children (labels missing, bad or out
// of range, foreign owners, any conditions and counts) and policies, and checks
// that it never panics and keeps its invariants: counters never go backwards, no
// name is created twice or over an existing Job, only input Jobs are deleted
// (each once), suspended or resumed, only running children resized (never one
// deleted), and every action has a reason.
func FuzzCompute(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, uint8(1), uint8(0))
	f.Add([]byte{2, 0, 1, 1, 3, 0, 2, 2, 255, 7, 0, 1}, uint8(0), uint8(3))
	roleNames := []string{"leader", "workers", "", "other"}
	indexes := []string{"0", "1", "2", "-1", "x", "99999999999"}
	reasons := []string{"BackoffLimitExceeded", "PodFailurePolicy", "DeadlineExceeded"}
	condTypes := []batchv1.JobConditionType{batchv1.JobComplete, batchv1.JobFailed, batchv1.JobFailureTarget, batchv1.JobSuccessCriteriaMet, batchv1.JobSuspended}
	actions := []plaingroup.Action{plaingroup.FailJobSet, plaingroup.RestartJobSet, plaingroup.RestartJob, plaingroup.RestartJobAndIgnoreMaxRestarts, plaingroup.RestartJobSetAndIgnoreMaxRestarts}
	f.Fuzz(func(t *testing.T, data []byte, mode, restarts uint8) {
		in := leaderWorkers(2)
		in.Status.Restarts = int32(restarts % 4)
		in.Status.RestartsCountTowardsMax = in.Status.Restarts / 2
		in.Suspend = mode&1 != 0
		if mode&2 != 0 {
			in.Spec.StartupOrder = plaingroup.InOrder
		} else if mode&4 != 0 {
			in.Spec.Roles[1].DependsOn = []plaingroup.Dependency{{Name: "leader", Status: plaingroup.DependsOnComplete}}
		}
		if mode&8 != 0 {
			in.Spec.FailurePolicy = &plaingroup.FailurePolicy{MaxRestarts: int32(mode >> 6), RestartStrategy: plaingroup.BlockingRecreate,
				Rules: []plaingroup.Rule{{Action: actions[int(mode>>4)%len(actions)], OnJobFailureReasons: []string{reasons[int(mode>>5)%len(reasons)]}}}}
		}
		if mode&16 != 0 {
			in.Spec.TTLSecondsAfterFinished = ptr.To(int32(mode % 7))
		}
		if restarts&0x10 != 0 { // elastic: the workers scaled down, their pods grown
			in.Spec.Roles[1].Replicas = 1
			in.Templates[1].Spec.Parallelism, in.Templates[1].Spec.Completions = ptr.To[int32](3), ptr.To[int32](3)
		}
		ref := metav1.OwnerReference{APIVersion: "jobset.x-k8s.io/v1alpha2", Kind: "JobSet", Name: "js", UID: "js-uid", Controller: ptr.To(true)}
		for i := 0; i+5 < len(data); i += 6 {
			b := data[i : i+6]
			j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "js-j-" + strconv.Itoa(int(b[0]%5)), Namespace: "ns", Labels: map[string]string{},
				UID: types.UID("uid-" + strconv.Itoa(i))}}
			if r := roleNames[int(b[0])%len(roleNames)]; r != "" {
				j.Labels[plaingroup.LabelRoleName] = r
				j.Name = "js-" + r + "-" + indexes[int(b[1])%len(indexes)]
			}
			if b[1]%7 != 6 {
				j.Labels[plaingroup.LabelJobIndex] = indexes[int(b[1])%len(indexes)]
			}
			if b[2]%5 != 4 {
				j.Labels[plaingroup.LabelRestartAttempt] = strconv.Itoa(int(b[2]%5) - 1)
			}
			if b[2]&0x80 != 0 {
				j.Labels[plaingroup.LabelJobRestartAttempt] = strconv.Itoa(int(b[2]>>5) % 3)
			}
			if b[3]%9 != 8 {
				r := ref
				if b[3]%9 == 7 {
					r.UID = "other"
				}
				j.OwnerReferences = []metav1.OwnerReference{r}
			}
			if b[4]%3 != 0 {
				st := corev1.ConditionTrue
				if b[4]&0x40 != 0 {
					st = corev1.ConditionFalse
				}
				j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{
					Type: condTypes[int(b[4]>>2)%len(condTypes)], Status: st, Reason: reasons[int(b[4])%len(reasons)],
					LastTransitionTime: metav1.NewTime(t0.Add(time.Duration(b[5]) * time.Second)),
				})
			}
			j.Status.Active, j.Status.Ready = int32(b[5]%3)-1+1, ptr.To(int32(b[5]%4))
			j.Spec.Suspend = ptr.To(b[5]&0x80 != 0)
			if b[5]&0x40 != 0 {
				j.DeletionTimestamp = &metav1.Time{Time: t0}
			}
			in.Children = append(in.Children, j)
		}
		if len(data) > 0 && data[0]&1 != 0 {
			in.Children = append(in.Children, nil)
		}
		in.Now = t0.Add(time.Hour)
		p, err := childjobs.Compute(in)
		if err != nil {
			t.Fatalf("Compute: %v", err)
		}
		if p.Status.Restarts < in.Status.Restarts || p.Status.RestartsCountTowardsMax < in.Status.RestartsCountTowardsMax {
			t.Fatalf("counters went backwards: %+v from %+v", p.Status, in.Status)
		}
		existing := map[*batchv1.Job]bool{}
		held := map[string]bool{}
		for _, j := range in.Children {
			if j != nil {
				existing[j], held[j.Name] = true, true
			}
		}
		for _, c := range p.Create {
			if held[c.Job.Name] {
				t.Fatalf("creates %s, which exists or is created twice\n%s", c.Job.Name, p.String())
			}
			held[c.Job.Name] = true
			if c.Reason == "" {
				t.Fatalf("creation of %s has no reason", c.Job.Name)
			}
		}
		deleted := map[*batchv1.Job]bool{}
		for _, d := range p.Delete {
			if !existing[d.Job] || d.Reason == "" || d.Propagation != metav1.DeletePropagationForeground || deleted[d.Job] {
				t.Fatalf("bad deletion %+v\n%s", d, p.String())
			}
			deleted[d.Job] = true
		}
		for _, a := range p.Scale {
			j := a.Job
			r := 0
			if j.Labels[plaingroup.LabelRoleName] == "workers" {
				r = 1
			}
			want := ptr.Deref(in.Templates[r].Spec.Parallelism, 1)
			if a.Reason == "" || ptr.Deref(j.Spec.Parallelism, 0) != want || ptr.Deref(j.Spec.Completions, 0) != want || !held[j.Name] {
				t.Fatalf("bad resize %+v", a)
			}
			for d := range deleted {
				if d.Name == j.Name && d.UID == j.UID {
					t.Fatalf("%s resized and deleted\n%s", j.Name, p.String())
				}
			}
		}
		for _, a := range append(append([]childjobs.JobAction(nil), p.Suspend...), p.Resume...) {
			if !existing[a.Job] || a.Reason == "" {
				t.Fatalf("bad suspension %+v", a)
			}
		}
		if p.RequeueAfter > 0 && p.RequeueReason == "" {
			t.Fatal("requeue without a reason")
		}
		_ = p.String()
	})
}
