package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DeepCopyInto copies in into out, sharing nothing.
func (in *RunJob) DeepCopyInto(out *RunJob) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	in.Spec.DeepCopyInto(&out.Spec)
	in.Status.DeepCopyInto(&out.Status)
}

// DeepCopy returns a copy of in that shares nothing with it.
func (in *RunJob) DeepCopy() *RunJob {
	if in == nil {
		return nil
	}
	out := new(RunJob)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *RunJob) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies in into out, sharing nothing.
func (in *RunJobSpec) DeepCopyInto(out *RunJobSpec) {
	*out = *in
	if in.Timeouts != nil {
		out.Timeouts = in.Timeouts.DeepCopy()
	}
	if in.MaxRevivals != nil {
		v := *in.MaxRevivals
		out.MaxRevivals = &v
	}
	in.PodSpec.DeepCopyInto(&out.PodSpec)
}

// DeepCopy returns a copy of in that shares nothing with it.
func (in *PodTimeouts) DeepCopy() *PodTimeouts {
	if in == nil {
		return nil
	}
	out := new(PodTimeouts)
	*out = *in
	out.Unscheduled = copyDuration(in.Unscheduled)
	out.Pending = copyDuration(in.Pending)
	out.Running = copyDuration(in.Running)
	return out
}

// DeepCopyInto copies in into out, sharing nothing.
func (in *RunJobStatus) DeepCopyInto(out *RunJobStatus) {
	*out = *in
	if in.StartTime != nil {
		out.StartTime = in.StartTime.DeepCopy()
	}
	if in.PendingTime != nil {
		out.PendingTime = in.PendingTime.DeepCopy()
	}
	if in.CompletionTime != nil {
		out.CompletionTime = in.CompletionTime.DeepCopy()
	}
}

// DeepCopyInto copies in into out, sharing nothing.
func (in *RunJobList) DeepCopyInto(out *RunJobList) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]RunJob, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy returns a copy of in that shares nothing with it.
func (in *RunJobList) DeepCopy() *RunJobList {
	if in == nil {
		return nil
	}
	out := new(RunJobList)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *RunJobList) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}

func copyDuration(d *metav1.Duration) *metav1.Duration {
	if d == nil {
		return nil
	}
	c := *d
	return &c
}
