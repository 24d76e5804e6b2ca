package childjobs_test

import (
	"fmt"
	"math"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/childjobs"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// The first sync of a group of a leader and two workers creates every child
// and the headless Service; the children are run by a jobkit Job controller.
func ExampleCompute() {
	pods := func(n int32) batchv1.JobTemplateSpec {
		return batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Parallelism: ptr.To(n), Completions: ptr.To(n)}}
	}
	in := &childjobs.Input{
		Name: "train", Namespace: "ml", UID: "uid-1",
		Owner: schema.GroupVersionKind{Group: "jobset.x-k8s.io", Version: "v1alpha2", Kind: "JobSet"},
		Spec: plaingroup.Spec{Roles: []plaingroup.Role{
			{Name: "leader", Replicas: 1},
			{Name: "workers", Replicas: 2},
		}},
		Templates:      []batchv1.JobTemplateSpec{pods(1), pods(4)},
		ChildManagedBy: "example.com/job-controller",
		Now:            time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
	}
	p, err := childjobs.Compute(in)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.String())
	w := p.Create[2].Job
	fmt.Println(w.Name, *w.Spec.ManagedBy, w.Spec.Template.Spec.Subdomain, w.Labels[plaingroup.LabelJobIndex])
	// Output:
	// status: restarts=0 countTowardsMax=0 terminal="" (changed)
	// create service train: network.enableDNSHostnames: the pods' subdomain train needs a headless Service
	// create 3: train-leader-0 (index 0 of "leader" has no child (restart attempt 0, job restart attempt 0)), train-workers-0 (index 0 of "workers" has no child (restart attempt 0, job restart attempt 0)), train-workers-1 (index 1 of "workers" has no child (restart attempt 0, job restart attempt 0))
	// train-workers-1 example.com/job-controller train 1
}

// A worker has failed: with a failure policy allowing restarts, the sync counts
// a restart and deletes every child of the old attempt; the new ones are
// created once the old are gone.
func ExampleCompute_restart() {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	in := &childjobs.Input{
		Name: "train", Namespace: "ml", UID: "uid-1",
		Owner: schema.GroupVersionKind{Group: "jobset.x-k8s.io", Version: "v1alpha2", Kind: "JobSet"},
		Spec: plaingroup.Spec{
			Roles:         []plaingroup.Role{{Name: "workers", Replicas: 2}},
			FailurePolicy: &plaingroup.FailurePolicy{MaxRestarts: 3},
		},
		Templates:     []batchv1.JobTemplateSpec{{}},
		ServiceExists: true,
		Now:           t0,
	}
	first, _ := childjobs.Compute(in)
	in.Status = first.Status
	for _, c := range first.Create {
		in.Children = append(in.Children, c.Job)
	}
	in.Children[1].Status.Conditions = []batchv1.JobCondition{{
		Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded",
		Message: "Job has reached the specified backoff limit", LastTransitionTime: metav1.NewTime(t0),
	}}
	in.Now = t0.Add(time.Minute)
	p, _ := childjobs.Compute(in)
	fmt.Println(p.String())
	// Output:
	// status: restarts=1 countTowardsMax=1 terminal="" (changed)
	//   RestartingJobSet=True DefaultFailurePolicy
	// delete 2: train-workers-0 (obsolete: restart attempt 0, the group is at 1), train-workers-1 (obsolete: restart attempt 0, the group is at 1)
	// event Warning RestartJobSetFailurePolicyAction: applying RestartJobSet failure policy action (first failed job: train-workers-1)
}

// ReadChild reads the facts the group rules need from a child Job.
func ExampleReadChild() {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "train-workers-3", Namespace: "ml", Labels: map[string]string{
			plaingroup.LabelRoleName:       "workers",
			plaingroup.LabelJobIndex:       "3",
			plaingroup.LabelRestartAttempt: "1",
		}},
		Status: batchv1.JobStatus{Failed: 2, Conditions: []batchv1.JobCondition{{
			Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "PodFailurePolicy",
		}}},
	}
	ch, err := childjobs.ReadChild(job)
	fmt.Println(ch.Role, ch.Index, ch.Attempt, ch.Outcome, ch.Reason, ch.Failed, err)

	job.Labels[plaingroup.LabelJobIndex] = "three"
	_, err = childjobs.ReadChild(job)
	fmt.Println(err)
	// Output:
	// workers 3 1 Failed PodFailurePolicy 2 <nil>
	// group: job ml/train-workers-3: metadata.labels[jobset.sigs.k8s.io/job-index]: Invalid value: "three": must be a non-negative 32-bit integer
}

// A webhook for a JobSet-shaped resource converts the object to an Input,
// defaults it as JobSet's webhook does, and validates it on create; the
// errors carry JobSet's paths and words.
func ExampleInput_Validate() {
	in := &childjobs.Input{
		Name: "train",
		Spec: plaingroup.Spec{
			Roles:         []plaingroup.Role{{Name: "workers", Replicas: 2}},
			FailurePolicy: &plaingroup.FailurePolicy{RestartStrategy: plaingroup.InPlaceRestart},
			Coordinator:   &plaingroup.Coordinator{ReplicatedJob: "workers", PodIndex: 7},
		},
		Templates: []batchv1.JobTemplateSpec{{Spec: batchv1.JobSpec{
			Parallelism: ptr.To[int32](4), Completions: ptr.To[int32](4),
			BackoffLimit: ptr.To[int32](math.MaxInt32), PodReplacementPolicy: ptr.To(batchv1.Failed),
		}}},
	}
	in.Default()
	fmt.Println(*in.Templates[0].Spec.CompletionMode, in.Templates[0].Spec.Template.Spec.RestartPolicy, in.Spec.SuccessPolicy.Operator)
	for _, e := range in.Validate() {
		fmt.Println(e)
	}
	// Output:
	// Indexed OnFailure All
	// spec.coordinator.podIndex: Invalid value: 7: coordinator pod index 7 is invalid for replicatedJob workers job index 0
}

// On update a role's template is immutable, but a suspended group's pods may
// be given a nodeSelector (a queue's admission does that); the replicas may not
// change.
func ExampleInput_ValidateUpdate() {
	group := func(replicas int32, pool string) *childjobs.Input {
		t := batchv1.JobTemplateSpec{}
		if pool != "" {
			t.Spec.Template.Spec.NodeSelector = map[string]string{"pool": pool}
		}
		return &childjobs.Input{Name: "train", Suspend: true,
			Spec:      plaingroup.Spec{Roles: []plaingroup.Role{{Name: "workers", Replicas: replicas}}},
			Templates: []batchv1.JobTemplateSpec{t}}
	}
	fmt.Println(len(group(2, "a").ValidateUpdate(group(2, ""))))
	for _, e := range group(3, "a").ValidateUpdate(group(2, "")) {
		fmt.Println(e)
	}
	running := group(2, "a")
	running.Suspend = false
	was := group(2, "")
	was.Suspend = false
	fmt.Println(running.ValidateUpdate(was))
	// Output:
	// 0
	// spec.replicatedJobs[0].replicas: Invalid value: 3: field is immutable
	// [spec.replicatedJobs[0].template.spec.template.spec.nodeSelector: Invalid value: field is immutable]
}
