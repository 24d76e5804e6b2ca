package childjobs_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/childjobs"
)

func TestDisruptionBudget(t *testing.T) {
	in := leaderWorkers(2)
	p, err := childjobs.Compute(in)
	require.NoError(t, err)
	assert.Nil(t, p.DisruptionBudget, "no budget asked for")

	in.DisruptionBudget = ptr.To(intstr.FromString("10%"))
	p, err = childjobs.Compute(in)
	require.NoError(t, err)
	b := p.DisruptionBudget
	require.NotNil(t, b)
	assert.Equal(t, "js", b.Name)
	assert.Equal(t, "ns", b.Namespace)
	assert.Equal(t, intstr.FromString("10%"), *b.Spec.MaxUnavailable)
	assert.Nil(t, b.Spec.MinAvailable)
	assert.Equal(t, &metav1.LabelSelector{MatchLabels: map[string]string{
		"jobset.sigs.k8s.io/jobset-name": "js", "jobset.sigs.k8s.io/jobset-uid": "js-uid",
	}}, b.Spec.Selector)
	assert.Equal(t, ptr.To(policyv1.AlwaysAllow), b.Spec.UnhealthyPodEvictionPolicy)
	require.Len(t, b.OwnerReferences, 1)
	assert.Equal(t, "js-uid", string(b.OwnerReferences[0].UID))
	assert.True(t, *b.OwnerReferences[0].Controller)
	assert.Contains(t, p.String(), "create disruption budget js: maxUnavailable 10%")
	// Every pod of the group is selected: the children's pods carry both labels.
	for _, a := range p.Create {
		for k, v := range b.Spec.Selector.MatchLabels {
			assert.Equal(t, v, a.Job.Spec.Template.Labels[k], a.Job.Name)
		}
	}

	w := &world{t: t, in: in}
	w.in.DisruptionBudgetExists = true
	assert.Nil(t, w.sync(t0).DisruptionBudget, "in the cache")
	w.in.DisruptionBudgetExists = false
	for _, n := range []string{"js-leader-0", "js-workers-0", "js-workers-1"} {
		w.finish(n, batchv1.JobComplete, "Completed", "", t0.Add(time.Minute))
	}
	w.sync(t0.Add(time.Minute))
	assert.Nil(t, w.sync(t0.Add(2*time.Minute)).DisruptionBudget, "a finished group plans none")
}
