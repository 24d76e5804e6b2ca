package childjobs_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobkit/jobkit/groups/childjobs"
)

const (
	exclusiveKey    = "alpha.jobset.sigs.k8s.io/exclusive-topology"
	nodeSelectorKey = "alpha.jobset.sigs.k8s.io/node-selector"
	jobKeyLabel     = "jobset.sigs.k8s.io/job-key"
)

// created returns the Job of that name among the plan's creations.
func created(t *testing.T, p childjobs.Plan, name string) *batchv1.Job {
	t.Helper()
	for _, a := range p.Create {
		if a.Job.Name == name {
			return a.Job
		}
	}
	t.Fatalf("no creation of %s in\n%s", name, p.String())
	return nil
}

func TestExclusivePlacementByAffinity(t *testing.T) {
	in := leaderWorkers(2)
	in.Annotations = map[string]string{exclusiveKey: "cloud.google.com/gke-nodepool"}
	in.Templates[0].Annotations = map[string]string{exclusiveKey: "rack"}
	p, err := childjobs.Compute(in)
	require.NoError(t, err)

	w := created(t, p, "js-workers-1")
	key := w.Spec.Template.Labels[jobKeyLabel]
	require.NotEmpty(t, key)
	assert.Equal(t, "cloud.google.com/gke-nodepool", w.Annotations[exclusiveKey])
	assert.Equal(t, "cloud.google.com/gke-nodepool", w.Spec.Template.Annotations[exclusiveKey])
	a := w.Spec.Template.Spec.Affinity
	require.NotNil(t, a)
	assert.Equal(t, []corev1.PodAffinityTerm{{
		LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: jobKeyLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{key}}}},
		TopologyKey:   "cloud.google.com/gke-nodepool", NamespaceSelector: &metav1.LabelSelector{},
	}}, a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, "the pods of one child share a domain")
	assert.Equal(t, []corev1.PodAffinityTerm{{
		LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: jobKeyLabel, Operator: metav1.LabelSelectorOpExists},
			{Key: jobKeyLabel, Operator: metav1.LabelSelectorOpNotIn, Values: []string{key}},
		}},
		TopologyKey: "cloud.google.com/gke-nodepool", NamespaceSelector: &metav1.LabelSelector{},
	}}, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, "no pod of another child in its domain")
	assert.Empty(t, w.Spec.Template.Spec.NodeSelector)

	l := created(t, p, "js-leader-0")
	assert.Equal(t, "rack", l.Spec.Template.Annotations[exclusiveKey], "the role's annotation wins")
	assert.Equal(t, "rack", l.Spec.Template.Spec.Affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey)
	assert.Nil(t, in.Templates[1].Spec.Template.Spec.Affinity, "the template is not modified")
}

func TestExclusivePlacementByNodeSelector(t *testing.T) {
	in := leaderWorkers(1)
	in.Annotations = map[string]string{exclusiveKey: "rack", nodeSelectorKey: ""}
	in.Templates[1].Spec.Template.Spec.NodeSelector = map[string]string{"pool": "a"}
	p, err := childjobs.Compute(in)
	require.NoError(t, err)

	w := created(t, p, "js-workers-0")
	ps := w.Spec.Template.Spec
	assert.Equal(t, map[string]string{"pool": "a", "alpha.jobset.sigs.k8s.io/namespaced-job": "ns_js-workers-0"}, ps.NodeSelector)
	assert.Equal(t, []corev1.Toleration{{Key: "alpha.jobset.sigs.k8s.io/no-schedule", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}, ps.Tolerations)
	assert.Nil(t, ps.Affinity)
	assert.Contains(t, w.Annotations, nodeSelectorKey)
	assert.Equal(t, map[string]string{"pool": "a"}, in.Templates[1].Spec.Template.Spec.NodeSelector, "the template is not modified")
}

func TestNoExclusivePlacement(t *testing.T) {
	in := leaderWorkers(1)
	in.Annotations = map[string]string{nodeSelectorKey: "true"}
	p, err := childjobs.Compute(in)
	require.NoError(t, err)
	for _, a := range p.Create {
		assert.Nil(t, a.Job.Spec.Template.Spec.Affinity)
		assert.Empty(t, a.Job.Spec.Template.Spec.NodeSelector)
		assert.NotContains(t, a.Job.Annotations, exclusiveKey)
	}
}
