package sim

import (
	"flag"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/childjobs"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

var flagShapeSeeds = flag.Int("sim.shapeseeds", 0, "seeds TestGroupShapes runs at fault rate 0.2 (0: 40)")

// Groups scaled on the run, placed exclusively and restarted in place, under
// faults at 0.2: every child-Jobs seed, and every roles seed restarted in
// place, ends with 0 violations; the seeds cover each shape and their
// combinations. -sim.shapeseeds=300 is the long sweep.
func TestGroupShapes(t *testing.T) {
	n := *flagShapeSeeds
	if n == 0 {
		n = 40
	}
	var mu sync.Mutex
	var resized, exclusive, inPlace, inPlaceResized, completed, roles int
	seeds := make(chan uint64)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for seed := range seeds {
				res, err := RunChildJobs(ChildJobsConfig{Seed: seed, FaultRate: 0.2})
				var rolesRes *RolesResult
				var rerr error
				if inPlaceSeed(seed) != nil {
					rolesRes, rerr = RunRoles(RolesConfig{Seed: seed, FaultRate: 0.2})
				}
				mu.Lock()
				require.NoError(t, err)
				require.NoError(t, rerr)
				assert.True(t, res.OK(), "group seed %d: %s", seed, res.Summary())
				if rolesRes != nil {
					roles++
					assert.True(t, rolesRes.OK(), "roles seed %d: %s", seed, rolesRes.Summary())
				}
				r := strings.Contains(res.Group, "resized")
				ip := strings.Contains(res.Group, "InPlaceRestart")
				count := map[bool]int{true: 1}
				resized += count[r]
				exclusive += count[strings.Contains(res.Group, "exclusive")]
				inPlace += count[ip]
				inPlaceResized += count[ip && r]
				completed += count[res.Status.TerminalState == plaingroup.ConditionCompleted]
				mu.Unlock()
			}
		})
	}
	for i := range n {
		seeds <- uint64(i)
	}
	close(seeds)
	wg.Wait()
	t.Logf("%d groups: %d resized while running, %d placed exclusively, %d restarted in place (%d of them resized), %d completed; %d roles owners restarted in place",
		n, resized, exclusive, inPlace, inPlaceResized, completed, roles)
	assert.Greater(t, resized, n/6)
	assert.Greater(t, exclusive, n/4)
	assert.Positive(t, inPlaceResized)
	assert.Greater(t, completed, n/2)
}

// The shape's checks catch what they are for: two child Jobs in one domain,
// a child left beyond its role's size, a Completed group short of a child or
// counting wrong; and its scheduler honours the affinity terms.
func TestGroupShapeChecks(t *testing.T) {
	pod := func(uid, job string, term bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: uid, Namespace: "sim", UID: types.UID(uid),
			Labels:          map[string]string{"jobset.sigs.k8s.io/job-key": job},
			OwnerReferences: []metav1.OwnerReference{{Kind: "Job", Name: job, Controller: ptr.To(true)}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
		if term {
			sel := func(op metav1.LabelSelectorOperator, v ...string) *metav1.LabelSelector {
				return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "jobset.sigs.k8s.io/job-key", Operator: op, Values: v}}}
			}
			p.Spec.Affinity = &corev1.Affinity{
				PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
					{LabelSelector: sel(metav1.LabelSelectorOpIn, job), TopologyKey: simTopology}}},
				PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
					{LabelSelector: sel(metav1.LabelSelectorOpNotIn, job), TopologyKey: simTopology}}},
			}
		}
		return p
	}
	a, b := pod("a", "leader", true), pod("b", "workers", true)
	x := &groupShape{exclusive: true, domain: map[types.UID]string{"a": "rack-0"}}
	assert.False(t, x.fits(b, "rack-0", []*corev1.Pod{a}), "anti-affinity keeps another child out")
	assert.True(t, x.fits(b, "rack-1", []*corev1.Pod{a}))
	a2 := pod("a2", "leader", true)
	assert.False(t, x.fits(a2, "rack-1", []*corev1.Pod{a}), "affinity keeps a child's pods together")
	assert.True(t, x.fits(a2, "rack-0", []*corev1.Pod{a}))
	bare := pod("c", "workers", false)
	assert.False(t, x.fits(bare, "rack-0", []*corev1.Pod{a}), "the bound pod's anti-affinity keeps a pod without terms out")

	jobs := func(replicas ...int32) []*batchv1.Job {
		var out []*batchv1.Job
		for i, n := range replicas {
			for idx := range n {
				id := plaingroup.Identity{Name: "j", Role: []string{"leader", "workers"}[i], Index: idx}
				j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", Labels: id.Labels("group", "uid", "sim", "")}}
				j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
				out = append(out, j)
			}
		}
		return out
	}
	completed := func(workers int32, succeeded int32) *simGroup {
		return &simGroup{Spec: plaingroup.Spec{Roles: []plaingroup.Role{{Name: "leader", Replicas: 1}, {Name: "workers", Replicas: workers}}},
			Status: childjobs.Status{TerminalState: plaingroup.ConditionCompleted, ReplicatedJobs: []plaingroup.RoleStatus{
				{Name: "leader", Succeeded: 1}, {Name: "workers", Succeeded: succeeded}}}}
	}
	cases := []struct {
		name string
		g    *simGroup
		jobs []*batchv1.Job
		want Invariant
	}{
		{name: "the right children and counters", g: completed(2, 2), jobs: jobs(1, 2)},
		{name: "a child left beyond the replicas", g: completed(1, 1), jobs: jobs(1, 2), want: InvGroupSize},
		{name: "a child missing", g: completed(3, 3), jobs: jobs(1, 2), want: InvGroupSize},
		{name: "a counter wrong", g: completed(2, 3), jobs: jobs(1, 2), want: InvGroupSize},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rw := &rolesWorld{}
			x := &groupShape{violate: rw.violate}
			x.checkSize(tc.g, tc.jobs)
			if tc.want == "" {
				assert.Empty(t, rw.violations)
				return
			}
			require.Len(t, rw.violations, 1)
			assert.Equal(t, tc.want, rw.violations[0].Invariant, "%s", rw.violations[0])
		})
	}
}
