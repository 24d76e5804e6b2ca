package ownedpods_test

import (
	"fmt"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/ownedpods"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// bytesReader hands out small numbers from fuzz data, zero once it runs out.
type bytesReader []byte

func (b *bytesReader) next(n int) int {
	if len(*b) == 0 || n <= 0 {
		return 0
	}
	v := int((*b)[0]) % n
	*b = (*b)[1:]
	return v
}

// fuzzInput builds an owner of a launcher and workers at some restart, with
// pods of any role, attempt, phase and finalizer, from data.
func fuzzInput(data []byte) ownedpods.Input {
	b := bytesReader(data)
	w := trainingJob(int32(1+b.next(4)), int32(b.next(3)))
	if b.next(2) == 0 {
		w.Roles[1].DependsOn = nil
	}
	if b.next(2) == 0 {
		w.FailurePolicy.RestartStrategy = plaingroup.BlockingRecreate
	}
	w.Suspend = b.next(4) == 0
	w.Deleting = b.next(6) == 0
	w.Status.Restarts = int32(b.next(3))
	w.Status.RestartsCountTowardsMax = int32(b.next(int(w.Status.Restarts) + 1))
	if b.next(5) == 0 {
		w.Status.TerminalState = "Completed"
	}
	names := []string{"worker", "launcher", "ps", ""}
	for i := range b.next(4) {
		rs := ownedpods.RoleStatus{Name: names[b.next(len(names))], Attempt: int32(b.next(4)),
			Succeeded: int32(b.next(5)), Failed: int32(b.next(5))}
		rs.Job.Succeeded, rs.Job.Failed = int32(b.next(3)), int32(b.next(3))
		if b.next(2) == 0 {
			rs.Job.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{
				Succeeded: []types.UID{types.UID(fmt.Sprint("uid-", b.next(8)))},
				Failed:    []types.UID{types.UID(fmt.Sprint("uid-", 8+b.next(8)))},
			}
		}
		if b.next(4) == 0 {
			rs.Job.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"}}
		}
		_ = i
		w.Status.Roles = append(w.Status.Roles, rs)
	}
	phases := []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed}
	var pods []*corev1.Pod
	for i := range b.next(12) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: fmt.Sprint("pod-", i), UID: types.UID(fmt.Sprint("uid-", i)),
			Labels: map[string]string{},
		}}
		if b.next(8) > 0 {
			p.OwnerReferences = []metav1.OwnerReference{kind.NewControllerRef(&metav1.ObjectMeta{Name: ownerName, UID: ownerUID})}
		}
		if r := names[b.next(len(names))]; r != "" {
			p.Labels[plaingroup.LabelRoleName] = r
		}
		p.Labels[plaingroup.LabelRestartAttempt] = []string{"0", "1", "2", "x", "-1"}[b.next(5)]
		p.Labels[kind.IndexKey()] = fmt.Sprint(b.next(5))
		p.Annotations = map[string]string{kind.IndexKey(): p.Labels[kind.IndexKey()]}
		if b.next(3) > 0 {
			p.Finalizers = []string{kind.Finalizer}
		}
		if b.next(5) == 0 {
			p.DeletionTimestamp = ptr.To(metav1.NewTime(t0))
		}
		p.Status.Phase = phases[b.next(len(phases))]
		pods = append(pods, p)
	}
	return ownedpods.Input{Workload: w, Pods: pods, ControllerName: controller, ExpectationsSatisfied: b.next(4) > 0, Now: t0, Owner: kind}
}

func FuzzCompute(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 2, 1, 1, 1, 0, 1, 1, 0, 2, 0, 1, 3, 2, 1, 0, 0, 1, 8, 1, 7, 0, 1, 1, 2, 2, 3, 1})
	f.Add([]byte{0, 1, 0, 0, 0, 1, 2, 1, 1, 3, 1, 1, 2, 2, 2, 1, 1, 1, 9, 1, 1, 0, 0, 1, 3, 1, 0, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := fuzzInput(data)
		before := *deepCopyStatus(&in.Workload.Status)
		podsBefore := make([]*corev1.Pod, len(in.Pods))
		for i, p := range in.Pods {
			podsBefore[i] = p.DeepCopy()
		}
		rolesBefore := fmt.Sprintf("%+v", in.Workload.Roles[0].Spec.Template)
		p, err := ownedpods.Compute(in)
		if err != nil {
			t.Fatalf("Compute of a valid owner: %v", err)
		}
		if p.Skip != "" {
			return
		}
		st := p.Status
		if st.Restarts < before.Restarts || st.RestartsCountTowardsMax < before.RestartsCountTowardsMax {
			t.Fatalf("restarts went back: %+v -> %+v", before, st)
		}
		if len(st.Roles) != len(in.Workload.Roles) {
			t.Fatalf("%d role entries for %d roles", len(st.Roles), len(in.Workload.Roles))
		}
		for i, rs := range st.Roles {
			if rs.Name != in.Workload.Roles[i].Name {
				t.Fatalf("entry %d is %q, role %q", i, rs.Name, in.Workload.Roles[i].Name)
			}
			for _, old := range before.Roles {
				if old.Name != rs.Name {
					continue
				}
				if rs.Succeeded < old.Succeeded || rs.Failed < old.Failed || rs.Attempt < old.Attempt {
					t.Fatalf("role %s went back: %+v -> %+v", rs.Name, old, rs)
				}
				break // a repeated entry is dropped
			}
		}
		if (in.Workload.Deleting || in.Workload.Suspend || st.TerminalState != "") && len(p.Create) > 0 {
			t.Fatalf("%d creations for an owner deleting, suspended or finished", len(p.Create))
		}
		removing := map[types.UID]bool{}
		for _, a := range p.RemoveFinalizers {
			removing[a.Pod.UID] = true
		}
		for _, d := range p.Delete {
			if d.RemoveFinalizerFirst && removing[d.Pod.UID] {
				t.Fatalf("pod %s has its finalizer removed twice", d.Pod.Name)
			}
		}
		for _, c := range p.Create {
			role := c.Pod.Labels[plaingroup.LabelRoleName]
			for _, rs := range st.Roles {
				if rs.Name == role && c.Pod.Labels[plaingroup.LabelRestartAttempt] != fmt.Sprint(rs.Attempt) {
					t.Fatalf("pod %s created for attempt %s, role %s at %d", c.Pod.Name, c.Pod.Labels[plaingroup.LabelRestartAttempt], role, rs.Attempt)
				}
			}
		}
		if !equalStatus(&in.Workload.Status, &before) {
			t.Fatal("Compute modified the owner's status")
		}
		if !equality.Semantic.DeepEqual(in.Pods, podsBefore) {
			t.Fatal("Compute modified the pods")
		}
		if fmt.Sprintf("%+v", in.Workload.Roles[0].Spec.Template) != rolesBefore {
			t.Fatal("Compute modified a role's template")
		}
	})
}

func equalStatus(a, b *ownedpods.Status) bool {
	return fmt.Sprintf("%+v", *a) == fmt.Sprintf("%+v", *b)
}
