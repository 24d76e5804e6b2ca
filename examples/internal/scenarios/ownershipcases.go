package scenarios

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// A Job deleted with propagationPolicy Background leaves its pods (no garbage
// collector here); the orphan cleanup removes their tracking finalizer.
func orphansAfterDeletion(s *scenario) {
	s.createJob(s.newJob(jobName, ptr.To[int32](3), ptr.To[int32](2)))
	pods := s.waitRunning(jobName, 2)
	s.finish(pods[0], succeed) // one finished, still uncounted or counted: both must go
	s.deleteJob(jobName)
	s.waitPods(jobName, "no tracking finalizer left", func(p []*corev1.Pod) bool {
		return len(p) >= 2 && len(filter(p, hasFinalizer)) == 0
	})
}

// A Job deleted and recreated under the same name starts fresh: new pods, counters
// from zero, nothing inherited from the old Job's pods or expectations.
func recreatedJob(s *scenario) {
	old := s.createJob(s.newJob(jobName, ptr.To[int32](1), ptr.To[int32](1)))
	oldPods := s.waitRunning(jobName, 1)
	s.deleteJob(jobName)
	cur := s.createJob(s.newJob(jobName, ptr.To[int32](1), ptr.To[int32](1)))
	s.waitPods(jobName, "a pod of the new Job", func(p []*corev1.Pod) bool {
		for _, pod := range p {
			if ownerUID(pod) == cur.UID && isRunning(pod) {
				return true
			}
		}
		return false
	})
	s.succeedAll() // the old pod is running too and succeeds; it must not count
	job := s.waitFinished(jobName)
	s.expect(job, finalStatus{Succeeded: 1, Conditions: completed})
	var owners []string
	for _, p := range s.podsOf(jobName) {
		owners = append(owners, string(ownerUID(p)))
	}
	slices.Sort(owners)
	want := []string{string(old.UID), string(cur.UID)}
	slices.Sort(want)
	if !slices.Equal(owners, want) {
		s.t.Errorf("pod owners = %v, want one pod of the old Job (%s) and one of the new (%s)", owners, old.UID, cur.UID)
	}
	if len(oldPods) != 1 || ownerUID(oldPods[0]) != old.UID {
		s.t.Errorf("pods of the first Job = %d, want 1 owned by %s", len(oldPods), old.UID)
	}
}

// The controller stops while one pod has succeeded and another has failed without
// being counted; a new controller (new process state) counts them exactly once.
func controllerRestart(s *scenario) {
	s.createJob(s.newJob(jobName, ptr.To[int32](4), ptr.To[int32](2)))
	pods := s.waitRunning(jobName, 2)
	s.finish(pods[0], succeed)
	s.waitJob(jobName, "succeeded=1", func(j *batchv1.Job) bool { return j.Status.Succeeded == 1 })
	running := s.waitRunning(jobName, 2)

	s.stopController()
	s.finish(running[0], succeed)
	s.finish(running[1], failWith(1))
	s.consistently("nothing counted while stopped", func() (bool, string) {
		j := s.getJob(jobName)
		return j.Status.Succeeded == 1 && j.Status.Failed == 0 && len(s.podsOf(jobName)) == 3, describeJob(j)
	})

	s.succeedAll()
	s.startController()
	job := s.waitFinished(jobName)
	s.expect(job, finalStatus{Succeeded: 4, Failed: 1, Conditions: completed})
	s.countPods(jobName, 5)
}

// A Job whose managedBy names another controller gets no pods and no status, and the
// tracking finalizer of a pod it owns stays.
func otherManagedBy(s *scenario) {
	s.noControl = true
	j := s.newJob(jobName, ptr.To[int32](1), ptr.To[int32](1))
	j.Spec.ManagedBy = ptr.To("example.com/another-controller")
	job := s.createJob(j)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: s.ns, Name: "theirs",
			Labels:          job.Spec.Template.Labels,
			Finalizers:      []string{batchv1.JobTrackingFinalizer},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))},
		},
		Spec: job.Spec.Template.Spec,
	}
	if _, err := s.cs.CoreV1().Pods(s.ns).Create(s.ctx, pod, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create pod: %v", err)
	}
	s.succeedAll() // the pod finishes: a finished pod of someone else's Job
	s.consistently("the Job and its pod left alone", func() (bool, string) {
		j := s.getJob(jobName)
		pods := s.podsOf(jobName)
		ok := j.ResourceVersion == job.ResourceVersion && len(pods) == 1 && hasFinalizer(pods[0])
		return ok, describeJob(j) + "\n" + s.describePods(jobName)
	})
	if accepted, _ := s.writes.counts(); accepted != 0 {
		s.t.Errorf("%d status writes by the controller, want none", accepted)
	}
}

// Finished orphan pods matching a Job's manual selector (as a Job deleted with the
// Orphan propagation leaves them, and a Job recreated with the same selector finds
// them) are adopted and counted: per pod one adoption patch and one finalizer
// removal, which carries the resourceVersion the adoption returned, so no 409.
func adoptedOrphans(s *scenario) {
	labels := map[string]string{"app": "adopt", batchv1.JobNameLabel: jobName}
	var orphans []*corev1.Pod
	for range 2 {
		pod, err := s.cs.CoreV1().Pods(s.ns).Create(s.ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, GenerateName: "orphan-", Labels: labels},
			Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			s.t.Fatalf("create orphan pod: %v", err)
		}
		orphans = append(orphans, pod)
	}
	for _, p := range s.waitRunning(jobName, len(orphans)) {
		s.finish(p, succeed)
	}
	s.waitPods(jobName, "orphans succeeded", func(p []*corev1.Pod) bool {
		return len(filter(p, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })) == len(orphans)
	})
	s.consistently("orphans without a Job left alone", func() (bool, string) {
		for _, p := range s.podsOf(jobName) {
			if ownerUID(p) != "" || s.patches.of(s.ns, p.Name) != (patchCount{}) {
				return false, s.describePods(jobName)
			}
		}
		return true, ""
	})

	j := s.newJob(jobName, ptr.To[int32](2), ptr.To[int32](2))
	j.Spec.ManualSelector = ptr.To(true)
	j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "adopt"}}
	j.Spec.Template.Labels = labels
	cur := s.createJob(j)
	job := s.waitFinished(jobName)
	s.expect(job, finalStatus{Succeeded: 2, Conditions: completed})
	s.countPods(jobName, len(orphans)) // nothing created: the orphans were enough
	for _, p := range s.podsOf(jobName) {
		if ownerUID(p) != cur.UID {
			s.t.Errorf("pod %s: controller %q, want the Job %s", p.Name, ownerUID(p), cur.UID)
		}
		if got, want := s.patches.of(s.ns, p.Name), (patchCount{Patches: 2}); got != want {
			s.t.Errorf("controller patches of pod %s = %+v, want %+v (one adoption, one finalizer removal)", p.Name, got, want)
		}
	}
}

// A running pod whose labels stop matching its Job's selector is released in one
// patch, which removes the controller reference and the tracking finalizer (as the
// Job controller does): the orphan cleanup has nothing left to do, and the released
// pod, which succeeds later, is never counted.
func releaseInOnePatch(s *scenario) {
	job := s.createJob(s.newJob(jobName, ptr.To[int32](2), ptr.To[int32](2)))
	moved := s.waitRunning(jobName, 2)[0]
	_, err := s.cs.CoreV1().Pods(s.ns).Patch(s.ctx, moved.Name, types.StrategicMergePatchType,
		[]byte(`{"metadata":{"labels":{"`+batchv1.ControllerUidLabel+`":"released"}}}`), metav1.PatchOptions{})
	if err != nil {
		s.t.Fatalf("relabel pod %s: %v", moved.Name, err)
	}
	s.waitPods(jobName, "pod "+moved.Name+" released", func(pods []*corev1.Pod) bool {
		for _, p := range pods {
			if p.UID == moved.UID {
				return ownerUID(p) == "" && !hasFinalizer(p)
			}
		}
		return false
	})
	s.consistently("one patch for the released pod", func() (bool, string) {
		got := s.patches.of(s.ns, moved.Name)
		return got == patchCount{Patches: 1}, fmt.Sprintf("controller patches of pod %s = %+v, want one, no Conflict", moved.Name, got)
	})
	s.succeedAll() // the released pod succeeds too: it must not count
	done := s.waitFinished(jobName)
	s.expect(done, finalStatus{Succeeded: 2, Conditions: completed})
	for _, p := range s.podsOf(jobName) {
		if p.UID != moved.UID && ownerUID(p) != job.UID {
			s.t.Errorf("pod %s: controller %q, want the Job %s", p.Name, ownerUID(p), job.UID)
		}
	}
	if got := s.patches.of(s.ns, moved.Name); got != (patchCount{Patches: 1}) {
		s.t.Errorf("controller patches of the released pod %s = %+v after the Job finished, want one", moved.Name, got)
	}
}
