package reconciletest

import (
	"context"
	"errors"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
)

// The calls of reconcile.ChildJobClient the restart figure's group never makes: it
// has no volume claim policies, no disruption budget, and no role is resized.

func (g *restartGroup) CreateClaim(context.Context, *corev1.PersistentVolumeClaim) error {
	return errors.New("restart figure: the group has no volume claim policies")
}

func (g *restartGroup) CreateDisruptionBudget(context.Context, *policyv1.PodDisruptionBudget) error {
	return errors.New("restart figure: the group has no disruption budget")
}

func (g *restartGroup) ScaleJob(context.Context, *batchv1.Job) error {
	return errors.New("restart figure: no role is resized")
}
