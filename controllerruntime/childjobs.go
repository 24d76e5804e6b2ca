package controllerruntime

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/jobkit/jobkit/groups/childjobs"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/reconcile"
)

// syncChildJobs syncs a group of child Jobs, in converted by Type.ChildJobs
// (a fresh Input this sync fills): Reconciler.SyncChildJobs over the cached
// Jobs that name its UID as controller (a group adopts nothing), whether its
// headless Service (named by the subdomain, default the group's name) is
// cached, and the status writer of Type.SetChildJobsStatus. A group whose spec
// childjobs.Input.Validate refuses is failed instead (refuse).
func (o *ownerOf[T]) syncChildJobs(ctx context.Context, in *childjobs.Input) (reconcile.Result, error) {
	if in.Object == nil {
		return reconcile.Result{}, fmt.Errorf("%w: Type.ChildJobs of %s/%s left Input.Object nil", reconcile.ErrInvalidArgument, in.Namespace, in.Name)
	}
	if errs := in.Validate(); len(errs) > 0 && !in.Deleting {
		return o.refuse(ctx, in, errs)
	}
	var jobs batchv1.JobList
	// No deep copy: SyncChildJobs modifies no child.
	if err := o.cache.List(ctx, &jobs, client.InNamespace(in.Namespace),
		client.MatchingFields{OwnerUIDIndex: string(in.UID)}, client.UnsafeDisableDeepCopy); err != nil {
		return reconcile.Result{}, fmt.Errorf("list the Jobs of %s/%s: %w", in.Namespace, in.Name, err)
	}
	in.Children = make([]*batchv1.Job, len(jobs.Items))
	for i := range jobs.Items {
		in.Children[i] = &jobs.Items[i]
	}
	svc := types.NamespacedName{Namespace: in.Namespace, Name: cmp.Or(in.Spec.Subdomain, in.Name)}
	err := o.cache.Get(ctx, svc, &corev1.Service{})
	if client.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, fmt.Errorf("read the Service of %s/%s: %w", in.Namespace, in.Name, err)
	}
	in.ServiceExists = err == nil
	if o.planned {
		if err := o.readPlanned(ctx, in); err != nil {
			return reconcile.Result{}, err
		}
	}
	if p := in.Spec.FailurePolicy; o.inPlace && p != nil && p.RestartStrategy == plaingroup.InPlaceRestart {
		var pods corev1.PodList
		if err := o.cache.List(ctx, &pods, client.InNamespace(in.Namespace),
			client.MatchingLabels{plaingroup.LabelJobSetName: in.Name}, client.UnsafeDisableDeepCopy); err != nil {
			return reconcile.Result{}, fmt.Errorf("list the pods of %s/%s: %w", in.Namespace, in.Name, err)
		}
		in.Pods = make([]*corev1.Pod, len(pods.Items))
		for i := range pods.Items {
			in.Pods[i] = &pods.Items[i]
		}
	}
	in.ChildManagedBy = cmp.Or(in.ChildManagedBy, o.childManagedBy)
	a := childJobsAPI[T]{c: o.client, typ: o.typ}
	return o.rec.SyncChildJobs(ctx, in, a, a)
}

// readPlanned fills in, for Options.ClaimsAndBudgets, which of the group's
// volume claims and whether its disruption budget are in the cache: each is
// read by its name (plaingroup.VolumeClaim.ClaimName, and the group's name).
func (o *ownerOf[T]) readPlanned(ctx context.Context, in *childjobs.Input) error {
	in.ExistingClaims = nil
	for i := range in.ClaimTemplates {
		name := (&plaingroup.VolumeClaim{Name: in.ClaimTemplates[i].Name}).ClaimName(in.Name)
		err := o.cache.Get(ctx, types.NamespacedName{Namespace: in.Namespace, Name: name}, &corev1.PersistentVolumeClaim{})
		switch {
		case err == nil:
			in.ExistingClaims = append(in.ExistingClaims, name)
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("read the claim %s of %s/%s: %w", name, in.Namespace, in.Name, err)
		}
	}
	if in.DisruptionBudget == nil {
		return nil
	}
	err := o.cache.Get(ctx, types.NamespacedName{Namespace: in.Namespace, Name: in.Name}, &policyv1.PodDisruptionBudget{})
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("read the disruption budget of %s/%s: %w", in.Namespace, in.Name, err)
	}
	in.DisruptionBudgetExists = err == nil
	return nil
}

// groupOfPod maps a pod to the group its jobset-name label names (in the
// pod's namespace), for Options.InPlaceRestart: an agent's report of the pod's
// attempt queues the group.
func groupOfPod(_ context.Context, obj client.Object) []crreconcile.Request {
	name := obj.GetLabels()[plaingroup.LabelJobSetName]
	if name == "" {
		return nil
	}
	return []crreconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
}

// refuse fails a group whose spec is invalid, as JobSet fails an invalid JobSet:
// once, with a Failed condition of reason "Invalid" + the kind naming the errors,
// terminal state Failed, and a Warning event of that reason. Its rules cannot
// become valid (they are immutable), and failing it shows why. Once failed, its
// TTL after finishing applies: it is deleted (foreground) once expired, looked
// at again when it will.
func (o *ownerOf[T]) refuse(ctx context.Context, in *childjobs.Input, errs field.ErrorList) (reconcile.Result, error) {
	msg := errs.ToAggregate().Error()
	now := o.cfg.Clock.Now()
	if c := meta.FindStatusCondition(in.Status.Conditions, plaingroup.ConditionFailed); c != nil && c.Status == metav1.ConditionTrue {
		failed := []plaingroup.Condition{{Type: c.Type, Status: plaingroup.True, Reason: c.Reason, LastTransitionTime: c.LastTransitionTime.Time}}
		e, err := plaingroup.TTL(in.Spec.TTLSecondsAfterFinished, failed, in.Deleting, now)
		switch {
		case err != nil || (!e.Expired && e.Left <= 0):
			return reconcile.Result{}, nil // no TTL, or one the schema should refuse
		case !e.Expired:
			return reconcile.Result{RequeueAfter: e.Left}, nil
		}
		err = childJobsAPI[T]{c: o.client, typ: o.typ}.DeleteGroup(ctx, in)
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return reconcile.Result{}, fmt.Errorf("delete %s/%s (ttlSecondsAfterFinished expired): %w", in.Namespace, in.Name, err)
		}
		return reconcile.Result{}, nil
	}
	status := in.Status
	status.Conditions = slices.Clone(status.Conditions)
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: plaingroup.ConditionFailed, Status: metav1.ConditionTrue, Reason: o.invalid, Message: msg,
		ObservedGeneration: in.Generation, LastTransitionTime: metav1.NewTime(now),
	})
	status.TerminalState = plaingroup.ConditionFailed
	if _, err := (childJobsAPI[T]{c: o.client, typ: o.typ}).WriteStatus(ctx, in, status); err != nil {
		return reconcile.Result{}, fmt.Errorf("fail the invalid %s %s/%s: %w", o.kind().Kind, in.Namespace, in.Name, err)
	}
	o.cfg.Events.Eventf(in.Object, corev1.EventTypeWarning, o.invalid, "%s", msg)
	return reconcile.Result{}, nil
}

// childJobsAPI is the reconcile.ChildJobClient and childjobs.StatusWriter of
// groups T over a controller-runtime client: the child Jobs, the Service, the
// group's deletion, and its status written as rolesStatusWriter writes a roles
// owner's (a copy of Input.Object, Type.SetChildJobsStatus, the status
// subresource with Input.ResourceVersion as precondition, Type.ChildJobs back).
type childJobsAPI[T client.Object] struct {
	c   client.Client
	typ reconcile.Type[T]
}

var (
	_ reconcile.ChildJobClient = childJobsAPI[*batchv1.Job]{}
	_ childjobs.StatusWriter   = childJobsAPI[*batchv1.Job]{}
)

func (a childJobsAPI[T]) CreateJob(ctx context.Context, job *batchv1.Job) error {
	return a.c.Create(ctx, job)
}

func (a childJobsAPI[T]) CreateService(ctx context.Context, svc *corev1.Service) error {
	return a.c.Create(ctx, svc)
}

func (a childJobsAPI[T]) DeleteJob(ctx context.Context, job *batchv1.Job, p metav1.DeletionPropagation) error {
	return a.c.Delete(ctx, job, client.PropagationPolicy(p), client.Preconditions{UID: &job.UID})
}

// SuspendJob patches spec.suspend with the child's UID in the patch: the API
// server refuses it on a newer Job of the same name (metadata.uid is immutable).
// A resume's patch also carries the pod template's labels, annotations,
// nodeSelector, tolerations and schedulingGates that job holds (the plan's
// merge of the role's changes into the child's): the maps merge into the
// stored ones, the lists replace theirs.
func (a childJobsAPI[T]) SuspendJob(ctx context.Context, job *batchv1.Job, suspend bool) error {
	patch := fmt.Appendf(nil, `{"metadata":{"uid":%q},"spec":{"suspend":%t}}`, job.UID, suspend)
	if t := &job.Spec.Template; !suspend && (len(t.Labels)+len(t.Annotations)+len(t.Spec.NodeSelector)+len(t.Spec.Tolerations)+len(t.Spec.SchedulingGates) > 0) {
		meta := map[string]any{}
		if len(t.Labels) > 0 {
			meta["labels"] = t.Labels
		}
		if len(t.Annotations) > 0 {
			meta["annotations"] = t.Annotations
		}
		pod := map[string]any{}
		if len(t.Spec.NodeSelector) > 0 {
			pod["nodeSelector"] = t.Spec.NodeSelector
		}
		if len(t.Spec.Tolerations) > 0 {
			pod["tolerations"] = t.Spec.Tolerations
		}
		if len(t.Spec.SchedulingGates) > 0 {
			pod["schedulingGates"] = t.Spec.SchedulingGates
		}
		var err error
		patch, err = json.Marshal(map[string]any{
			"metadata": map[string]any{"uid": job.UID},
			"spec":     map[string]any{"suspend": false, "template": map[string]any{"metadata": meta, "spec": pod}},
		})
		if err != nil {
			return err
		}
	}
	return a.c.Patch(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: job.Name}},
		client.RawPatch(types.MergePatchType, patch))
}

// CreateClaim creates a persistent volume claim of the group.
func (a childJobsAPI[T]) CreateClaim(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error {
	return a.c.Create(ctx, pvc)
}

// CreateDisruptionBudget creates the group's PodDisruptionBudget.
func (a childJobsAPI[T]) CreateDisruptionBudget(ctx context.Context, pdb *policyv1.PodDisruptionBudget) error {
	return a.c.Create(ctx, pdb)
}

// ScaleJob patches spec.parallelism and spec.completions, with the child's UID
// in the patch as SuspendJob does.
func (a childJobsAPI[T]) ScaleJob(ctx context.Context, job *batchv1.Job) error {
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": job.UID},
		"spec":     map[string]any{"parallelism": job.Spec.Parallelism, "completions": job.Spec.Completions},
	})
	if err != nil {
		return err
	}
	return a.c.Patch(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: job.Name}},
		client.RawPatch(types.MergePatchType, patch))
}

func (a childJobsAPI[T]) DeleteGroup(ctx context.Context, in *childjobs.Input) error {
	obj, err := a.object(in)
	if err != nil {
		return err
	}
	return a.c.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationForeground), client.Preconditions{UID: &in.UID})
}

func (a childJobsAPI[T]) WriteStatus(ctx context.Context, in *childjobs.Input, status childjobs.Status) (*childjobs.Input, error) {
	obj, err := a.object(in)
	if err != nil {
		return nil, err
	}
	out, ok := obj.DeepCopyObject().(T)
	if !ok {
		return nil, fmt.Errorf("%w: a copy of %T is a %T", reconcile.ErrInvalidArgument, obj, obj.DeepCopyObject())
	}
	out.SetResourceVersion(in.ResourceVersion)
	if err := a.typ.SetChildJobsStatus(out, status); err != nil {
		return nil, fmt.Errorf("%w: Type.SetChildJobsStatus of %s/%s: %w", reconcile.ErrInvalidArgument, in.Namespace, in.Name, err)
	}
	if err := a.c.Status().Update(ctx, out); err != nil {
		return nil, err
	}
	stored, err := a.typ.ChildJobs(out)
	if err == nil && stored == nil {
		err = fmt.Errorf("%w: Type.ChildJobs of %s/%s as stored is no group of child Jobs", reconcile.ErrInvalidArgument, in.Namespace, in.Name)
	}
	return stored, err
}

// object returns in.Object as a T.
func (a childJobsAPI[T]) object(in *childjobs.Input) (T, error) {
	obj, ok := in.Object.(T)
	if !ok {
		return obj, fmt.Errorf("%w: childjobs.Input.Object is a %T, not a %T", reconcile.ErrInvalidArgument, in.Object, a.typ.New())
	}
	return obj, nil
}

// owns returns Owns with, for a Type of the child-Jobs shape, Jobs and Services
// (and claims and budgets with ClaimsAndBudgets) first, and each type once.
func (o *Options[T]) owns() []client.Object {
	var all []client.Object
	if o.Type.ChildJobs != nil {
		all = append(all, &batchv1.Job{}, &corev1.Service{})
		if o.ClaimsAndBudgets {
			all = append(all, &corev1.PersistentVolumeClaim{}, &policyv1.PodDisruptionBudget{})
		}
	}
	seen := map[reflect.Type]bool{}
	var out []client.Object
	for _, obj := range append(all, o.Owns...) {
		if t := reflect.TypeOf(obj); !seen[t] {
			seen[t] = true
			out = append(out, obj)
		}
	}
	return out
}
