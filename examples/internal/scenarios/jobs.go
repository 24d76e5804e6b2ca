package scenarios

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// --- Jobs ---

// newJob returns a Job named name managed by the scenario's controller, with
// restartPolicy Never and one container.
func (s *scenario) newJob(name string, completions, parallelism *int32) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: name},
		Spec: batchv1.JobSpec{
			ManagedBy:   ptr.To(s.managedBy),
			Completions: completions,
			Parallelism: parallelism,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}},
			}},
		},
	}
}

func (s *scenario) createJob(job *batchv1.Job) *batchv1.Job {
	s.t.Helper()
	out, err := s.cs.BatchV1().Jobs(s.ns).Create(s.ctx, job, metav1.CreateOptions{})
	if err != nil {
		s.t.Fatalf("create Job %s: %v", job.Name, err)
	}
	return out
}

func (s *scenario) getJob(name string) *batchv1.Job {
	s.t.Helper()
	job, err := s.cs.BatchV1().Jobs(s.ns).Get(s.ctx, name, metav1.GetOptions{})
	if err != nil {
		s.t.Fatalf("get Job %s: %v", name, err)
	}
	return job
}

// updateJob changes the spec of the Job name, retrying on conflicts.
func (s *scenario) updateJob(name string, mutate func(*batchv1.Job)) {
	s.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		job, err := s.cs.BatchV1().Jobs(s.ns).Get(s.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mutate(job)
		_, err = s.cs.BatchV1().Jobs(s.ns).Update(s.ctx, job, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		s.t.Fatalf("update Job %s: %v", name, err)
	}
}

// deleteJob deletes the Job name with propagationPolicy Background: envtest runs no
// garbage collector, so its pods stay.
func (s *scenario) deleteJob(name string) {
	s.t.Helper()
	err := s.cs.BatchV1().Jobs(s.ns).Delete(s.ctx, name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
	if err != nil {
		s.t.Fatalf("delete Job %s: %v", name, err)
	}
	s.eventually("Job "+name+" deleted", func() (bool, string) {
		_, err := s.cs.BatchV1().Jobs(s.ns).Get(s.ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
}

// waitJob waits until the Job name satisfies cond and returns it.
func (s *scenario) waitJob(name, what string, cond func(*batchv1.Job) bool) *batchv1.Job {
	s.t.Helper()
	var job *batchv1.Job
	s.eventually("Job "+name+": "+what, func() (bool, string) {
		j, err := s.cs.BatchV1().Jobs(s.ns).Get(s.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		job = j
		return cond(j), describeJob(j) + "\n" + s.describePods(name)
	})
	return job
}

// waitFinished waits for the Job's terminal condition (Complete or Failed).
func (s *scenario) waitFinished(name string) *batchv1.Job {
	s.t.Helper()
	return s.waitJob(name, "finished", func(j *batchv1.Job) bool {
		return hasCondition(j, batchv1.JobComplete) || hasCondition(j, batchv1.JobFailed)
	})
}

func hasCondition(job *batchv1.Job, t batchv1.JobConditionType) bool {
	return conditionOf(job, t) != nil
}

// conditionOf returns the condition t of job when it is True.
func conditionOf(job *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i, c := range job.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}

func describeJob(j *batchv1.Job) string {
	st := j.Status
	var conds []string
	for _, c := range st.Conditions {
		conds = append(conds, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
	}
	unc := "none"
	if u := st.UncountedTerminatedPods; u != nil {
		unc = fmt.Sprintf("succeeded=%d failed=%d", len(u.Succeeded), len(u.Failed))
	}
	return fmt.Sprintf("job %s: active=%d ready=%d terminating=%d succeeded=%d failed=%d completedIndexes=%q failedIndexes=%v uncounted[%s] startTime=%v conditions=%v",
		j.Name, st.Active, ptr.Deref(st.Ready, -1), ptr.Deref(st.Terminating, -1), st.Succeeded, st.Failed,
		st.CompletedIndexes, ptr.Deref(st.FailedIndexes, "<nil>"), unc, st.StartTime != nil, conds)
}

// finalStatus is the part of a finished Job's status the scenarios compare exactly.
type finalStatus struct {
	Active, Ready, Terminating, Succeeded, Failed int32
	CompletedIndexes                              string
	FailedIndexes                                 *string
	Conditions                                    []string // "Type=Status/Reason"
}

func statusOf(j *batchv1.Job) finalStatus {
	f := finalStatus{
		Active: j.Status.Active, Ready: ptr.Deref(j.Status.Ready, -1), Terminating: ptr.Deref(j.Status.Terminating, -1),
		Succeeded: j.Status.Succeeded, Failed: j.Status.Failed,
		CompletedIndexes: j.Status.CompletedIndexes, FailedIndexes: j.Status.FailedIndexes,
	}
	for _, c := range j.Status.Conditions {
		f.Conditions = append(f.Conditions, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	return f
}
