package reconcile_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// Resuming a group writes, with the clearing of each child's spec.suspend,
// the pod template changes made to its role while it was suspended (a
// queue's placement), merged into the children's own.
func TestSyncChildJobsResumeWritesTemplateChanges(t *testing.T) {
	gpu := corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists}
	tests := []struct {
		name string
		// role changes the role's pod template while the group is suspended.
		role func(*corev1.PodTemplateSpec)
		// want checks each resumed child's pod template.
		want func(t *testing.T, p *corev1.PodTemplateSpec)
	}{
		{name: "no change: only spec.suspend", role: func(*corev1.PodTemplateSpec) {},
			want: func(t *testing.T, p *corev1.PodTemplateSpec) {
				assert.Empty(t, p.Spec.NodeSelector)
				assert.Empty(t, p.Spec.Tolerations)
				assert.Equal(t, "mine", p.Labels["own"], "the child's own label stays")
			}},
		{name: "a queue's placement reaches the children",
			role: func(p *corev1.PodTemplateSpec) {
				p.Labels = map[string]string{"queue": "q1"}
				p.Annotations = map[string]string{"placed": "yes"}
				p.Spec.NodeSelector = map[string]string{"pool": "gpu"}
				p.Spec.Tolerations = []corev1.Toleration{gpu}
				p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/topology"}}
			},
			want: func(t *testing.T, p *corev1.PodTemplateSpec) {
				assert.Equal(t, "q1", p.Labels["queue"])
				assert.Equal(t, "mine", p.Labels["own"], "the child's own label stays")
				assert.Equal(t, "yes", p.Annotations["placed"])
				assert.Equal(t, map[string]string{"pool": "gpu"}, p.Spec.NodeSelector)
				assert.Equal(t, []corev1.Toleration{gpu}, p.Spec.Tolerations)
				assert.Equal(t, []corev1.PodSchedulingGate{{Name: "example.com/topology"}}, p.Spec.SchedulingGates)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newGroupEnv(t)
			e.api.group.Suspend = true
			e.settle(t)
			for _, j := range e.api.jobs {
				j.Spec.Template.Labels["own"] = "mine"
			}
			tmpls := []batchv1.JobTemplateSpec{*e.api.group.Templates[0].DeepCopy()}
			tt.role(&tmpls[0].Spec.Template)
			e.api.group.Templates = tmpls

			e.api.group.Suspend = false
			e.sync(t, e.api.cache())
			assert.Equal(t, "status; suspend=false g-w-0; suspend=false g-w-1", e.api.takeCalls(), "one write per child")
			for _, name := range []string{"g-w-0", "g-w-1"} {
				j := e.api.jobs[name]
				assert.False(t, *j.Spec.Suspend, "%s is resumed", name)
				tt.want(t, &j.Spec.Template)
			}
		})
	}
}
