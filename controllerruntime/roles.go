package controllerruntime

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// syncRoles syncs a roles owner: Reconciler.SyncRoles over the cached pods that
// name its UID as controller (a roles owner adopts nothing) and the status writer
// of Type.SetRolesStatus.
func (o *ownerOf[T]) syncRoles(ctx context.Context, g *ownedpods.Workload) (reconcile.Result, error) {
	list := func(g *ownedpods.Workload) ([]*corev1.Pod, error) {
		return o.listOwned(ctx, &plan.Workload{Namespace: g.Namespace, UID: g.UID})
	}
	return o.rec.SyncRoles(ctx, g, list, rolesStatusWriter[T]{c: o.client, typ: o.typ})
}

// rolesStatusWriter is the ownedpods.StatusWriter of owners T: it writes a copy of the
// owner in Workload.Object with the new status (Type.SetRolesStatus) through the
// status subresource, with Workload.ResourceVersion as the precondition (a stale
// one gets the API server's Conflict, returned as is), and converts the owner as
// stored with Type.Roles.
type rolesStatusWriter[T client.Object] struct {
	c   client.Client
	typ reconcile.Type[T]
}

func (s rolesStatusWriter[T]) WriteStatus(ctx context.Context, g *ownedpods.Workload, status ownedpods.Status) (*ownedpods.Workload, error) {
	obj, ok := g.Object.(T)
	if !ok {
		return nil, fmt.Errorf("%w: ownedpods.Workload.Object is a %T, not a %T", reconcile.ErrInvalidArgument, g.Object, s.typ.New())
	}
	out, ok := obj.DeepCopyObject().(T)
	if !ok {
		return nil, fmt.Errorf("%w: a copy of %T is a %T", reconcile.ErrInvalidArgument, obj, obj.DeepCopyObject())
	}
	out.SetResourceVersion(g.ResourceVersion)
	if err := s.typ.SetRolesStatus(out, status); err != nil {
		return nil, fmt.Errorf("%w: Type.SetRolesStatus of %s/%s: %w", reconcile.ErrInvalidArgument, g.Namespace, g.Name, err)
	}
	if err := s.c.Status().Update(ctx, out); err != nil {
		return nil, err
	}
	stored, err := s.typ.Roles(out)
	if err == nil && stored == nil {
		err = fmt.Errorf("%w: Type.Roles of %s/%s as stored is no roles owner", reconcile.ErrInvalidArgument, g.Namespace, g.Name)
	}
	return stored, err
}
