package controller

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/jobkit/jobkit/examples/jobset/api/v1alpha2"
	"github.com/jobkit/jobkit/groups/childjobs"
	"github.com/jobkit/jobkit/reconcile"
)

// api is the manager's client as SyncChildJobs calls it: the child Jobs, the
// Service, the JobSet's deletion and its status.
type api struct{ client.Client }

var (
	_ reconcile.ChildJobClient = api{}
	_ childjobs.StatusWriter   = api{}
)

func (a api) CreateJob(ctx context.Context, job *batchv1.Job) error { return a.Create(ctx, job) }

func (a api) CreateService(ctx context.Context, svc *corev1.Service) error {
	return a.Create(ctx, svc)
}

func (a api) DeleteJob(ctx context.Context, job *batchv1.Job, p metav1.DeletionPropagation) error {
	return a.Delete(ctx, job, client.PropagationPolicy(p), client.Preconditions{UID: &job.UID})
}

// SuspendJob patches spec.suspend with the child's UID in the patch: the API
// server refuses it on a newer Job of the same name (metadata.uid is immutable).
func (a api) SuspendJob(ctx context.Context, job *batchv1.Job, suspend bool) error {
	patch := fmt.Appendf(nil, `{"metadata":{"uid":%q},"spec":{"suspend":%t}}`, job.UID, suspend)
	return a.Patch(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: job.Name}},
		client.RawPatch(types.MergePatchType, patch))
}

func (a api) DeleteGroup(ctx context.Context, in *childjobs.Input) error {
	return a.Delete(ctx, in.Object.(*v1alpha2.JobSet), client.PropagationPolicy(metav1.DeletePropagationForeground), client.Preconditions{UID: &in.UID})
}

// WriteStatus updates the status of in's JobSet with the resourceVersion read.
func (a api) WriteStatus(ctx context.Context, in *childjobs.Input, st childjobs.Status) (*childjobs.Input, error) {
	js := in.Object.(*v1alpha2.JobSet).DeepCopy()
	js.Status = APIStatus(&st)
	if err := a.Status().Update(ctx, js); err != nil {
		return nil, err
	}
	return Input(js, nil, false, "", "", time.Time{}), nil
}
