package controller

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/groups/ownedpods"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
)

// The roles of a run with a launcher, in their order in ownedpods.Workload.Roles and
// ownedpods.Status.Roles: the workers first (the launcher depends on them), then the
// launcher. A pod carries its role's name in the role label.
const (
	RoleWorkers  = "workers"
	RoleLauncher = "launcher"
)

// FailRunRule names the group failure rule of a run with a launcher: a role
// failed by a FailJob rule of spec.podFailurePolicy, or by
// spec.activeDeadlineSeconds, fails the run at once, without a restart.
const FailRunRule = "FailRun"

// RolesWorkload presents tj, a run with a launcher, to jobkit as a workload of
// two roles under one owner (no child Jobs), in this order:
//
//   - RoleWorkers: the workers as Workload presents a run without a launcher
//     (Workers indexes, each retried up to backoffLimitPerIndex times, the run's
//     pod failure and success policies, its template), but for maxFailedIndexes,
//     0 when unset: a worker that fails beyond its retries fails the role at
//     once (MaxFailedIndexesExceeded) rather than when every other worker has
//     finished, since the others cannot go on without it;
//   - RoleLauncher: one pod (Indexed, index 0) retried up to
//     spec.launcher.backoffLimit times (0 when unset), under the run's pod
//     failure policy, from spec.launcher.template; it waits for the workers to be
//     Ready (dependsOn).
//
// Both roles take spec.backoff, spec.suspend and spec.activeDeadlineSeconds (which
// bounds each role of each attempt from its start). The group rules: the run
// succeeds when the launcher succeeds (success policy Any over RoleLauncher); a
// role that fails for good restarts the whole group (RestartJobSet, the default
// action), every pod of the old attempt gone before a pod of the new one is
// created (BlockingRecreate: no worker of a new attempt talks to one of the old),
// up to spec.maxRestarts times (0 when unset), after which the run fails with
// reason ReachedMaxRestarts; a role failed with reason PodFailurePolicy (a FailJob
// rule matched) or DeadlineExceeded fails the run at once (rule FailRunRule,
// FailJobSet). The status is RolesStatus(&tj.Status).
//
// It refuses, wrapping ErrInvalid and naming each field with its value, a run
// without a launcher (Workload converts it) and what Workload refuses, for both
// templates. The Workload points into tj (the templates): do not modify tj while
// it is in use.
func RolesWorkload(tj *v1alpha1.TrainingJob) (*ownedpods.Workload, error) {
	if tj == nil {
		return nil, fmt.Errorf("%w: the TrainingJob is nil", ErrInvalid)
	}
	if tj.Spec.Launcher == nil {
		return nil, fmt.Errorf("%w %s/%s: spec.launcher: unset: a run without a launcher is a Job-shaped workload (Workload)", ErrInvalid, tj.Namespace, tj.Name)
	}
	if err := validate(tj); err != nil {
		return nil, err
	}
	s := &tj.Spec
	backoff := BackoffPolicy(s.Backoff)
	workers := workerSpec(tj)
	workers.MaxFailedIndexes = cmp.Or(workers.MaxFailedIndexes, ptr.To[int32](0))
	launcher := plan.Spec{
		Completions:           ptr.To[int32](1),
		Parallelism:           ptr.To[int32](1),
		CompletionMode:        ptr.To(batchv1.IndexedCompletion),
		BackoffLimitPerIndex:  ptr.To(ptr.Deref(s.Launcher.BackoffLimit, 0)),
		PodFailurePolicy:      tj.PodFailurePolicy(),
		PodReplacementPolicy:  ptr.To(batchv1.Failed),
		Suspend:               s.Suspend,
		ActiveDeadlineSeconds: s.ActiveDeadlineSeconds,
		Template:              &s.Launcher.Template,
		ManagedBy:             s.ManagedBy,
	}
	return &ownedpods.Workload{
		Namespace:       tj.Namespace,
		Name:            tj.Name,
		UID:             tj.UID,
		Deleting:        tj.DeletionTimestamp != nil,
		Generation:      tj.Generation,
		ResourceVersion: tj.ResourceVersion,
		Object:          tj,
		ManagedBy:       s.ManagedBy,
		Suspend:         ptr.Deref(s.Suspend, false),
		Roles: []ownedpods.Role{
			{Name: RoleWorkers, Spec: workers, Backoff: backoff},
			{Name: RoleLauncher, Spec: launcher, Backoff: backoff,
				DependsOn: []plaingroup.Dependency{{Name: RoleWorkers, Status: plaingroup.DependsOnReady}}},
		},
		FailurePolicy: &plaingroup.FailurePolicy{
			MaxRestarts:     ptr.Deref(s.MaxRestarts, 0),
			RestartStrategy: plaingroup.BlockingRecreate,
			Rules: []plaingroup.Rule{{
				Name:                FailRunRule,
				Action:              plaingroup.FailJobSet,
				OnJobFailureReasons: []string{batchv1.JobReasonPodFailurePolicy, batchv1.JobReasonDeadlineExceeded},
			}},
		},
		SuccessPolicy: &plaingroup.SuccessPolicy{Operator: plaingroup.Any, TargetReplicatedJobs: []string{RoleLauncher}},
		StartupOrder:  plaingroup.AnyOrder,
		Status:        RolesStatus(&tj.Status),
	}, nil
}

// RolesStatus returns the status of a run with a launcher as a ownedpods.Status: the
// group's fields, the groupConditions, and one entry per role present in st, in
// the order RoleWorkers, RoleLauncher (none for a run that has not started). The
// Job-shaped fields of st (those of a run without a launcher) are not read. The
// result shares nothing with st.
func RolesStatus(st *v1alpha1.TrainingJobStatus) ownedpods.Status {
	out := ownedpods.Status{
		Restarts:                st.Restarts,
		RestartsCountTowardsMax: st.RestartsCountTowardsMax,
		Conditions:              slices.Clone(st.GroupConditions),
		TerminalState:           st.TerminalState,
	}
	for _, r := range []struct {
		name string
		st   *v1alpha1.RoleStatus
	}{{RoleWorkers, st.Workers}, {RoleLauncher, st.Launcher}} {
		if r.st == nil {
			continue
		}
		out.Roles = append(out.Roles, ownedpods.RoleStatus{
			Name:             r.name,
			Attempt:          r.st.Attempt,
			Job:              r.st.Current.JobStatus(),
			Succeeded:        r.st.Succeeded,
			Failed:           r.st.Failed,
			FailedOnTheirOwn: r.st.FailedOnTheirOwn,
		})
	}
	return out
}

// StatusFromRoles returns rs as the status of a run with a launcher, the
// Job-shaped fields unset: RolesStatus of the result is rs again, field for
// field. It refuses, wrapping ErrInvalid and naming the field and value, roles
// it cannot hold: a name other than RoleWorkers and RoleLauncher, a role listed
// twice, or the launcher before the workers; and in-place restart attempts
// (rs.InPlace), which a TrainingJob never has: it restarts by recreation. The
// result shares nothing with rs.
func StatusFromRoles(rs ownedpods.Status) (v1alpha1.TrainingJobStatus, error) {
	out := v1alpha1.TrainingJobStatus{
		Restarts:                rs.Restarts,
		RestartsCountTowardsMax: rs.RestartsCountTowardsMax,
		GroupConditions:         slices.Clone(rs.Conditions),
		TerminalState:           rs.TerminalState,
	}
	var errs []error
	if rs.InPlace != (plaingroup.InPlaceAttempts{}) {
		errs = append(errs, fmt.Errorf("%w status: inPlace: %+v: a TrainingJob restarts by recreation and has no in-place attempts", ErrInvalid, rs.InPlace))
	}
	for i := range rs.Roles {
		r := &rs.Roles[i]
		bad := func(why string) {
			errs = append(errs, fmt.Errorf("%w status: roles[%d].name: %q: %s", ErrInvalid, i, r.Name, why))
		}
		slot := &out.Workers
		switch r.Name {
		case RoleWorkers:
			if out.Launcher != nil {
				bad("the workers come before the launcher")
			}
		case RoleLauncher:
			slot = &out.Launcher
		default:
			bad(fmt.Sprintf("the roles are %q and %q", RoleWorkers, RoleLauncher))
			continue
		}
		if *slot != nil {
			bad("listed twice")
			continue
		}
		*slot = &v1alpha1.RoleStatus{
			Attempt:          r.Attempt,
			Succeeded:        r.Succeeded,
			Failed:           r.Failed,
			FailedOnTheirOwn: r.FailedOnTheirOwn,
			Current:          v1alpha1.AttemptStatusFromJob(r.Job),
		}
	}
	if err := errors.Join(errs...); err != nil {
		return v1alpha1.TrainingJobStatus{}, err
	}
	return out, nil
}
