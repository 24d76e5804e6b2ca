package childjobs_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// On resume, the pod template changes made to a role while the group was
// suspended (by a queue placing it) reach the role's children with the
// clearing of spec.suspend, merged into what the children hold.
func TestResumeCarriesTemplateChanges(t *testing.T) {
	gate := corev1.PodSchedulingGate{Name: "example.com/gate"}
	spot := corev1.Toleration{Key: "spot", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	tests := []struct {
		name string
		// child changes the suspended child before the resume (another
		// controller's keys); role changes the workers' template.
		child, role func(*corev1.PodTemplateSpec)
		// want is the workers' resumed pod template; nil: the Resume item is
		// the Input's Job itself.
		want func(*corev1.PodTemplateSpec)
	}{
		{name: "no change: the child as it is", role: func(*corev1.PodTemplateSpec) {}},
		{name: "a change the child already holds", child: func(p *corev1.PodTemplateSpec) { p.Spec.NodeSelector = map[string]string{"pool": "a"} },
			role: func(p *corev1.PodTemplateSpec) { p.Spec.NodeSelector = map[string]string{"pool": "a"} }},
		{name: "labels, annotations and nodeSelector merged, the role's value winning",
			child: func(p *corev1.PodTemplateSpec) {
				p.Labels["mine"], p.Labels["queue"] = "x", "old"
				p.Spec.NodeSelector = map[string]string{"zone": "z1"}
			},
			role: func(p *corev1.PodTemplateSpec) {
				p.Labels = map[string]string{"queue": "new"}
				p.Annotations = map[string]string{"placed": "yes"}
				p.Spec.NodeSelector = map[string]string{"pool": "a"}
			},
			want: func(p *corev1.PodTemplateSpec) {
				p.Labels["queue"] = "new"
				p.Annotations["placed"] = "yes"
				p.Spec.NodeSelector["pool"] = "a"
			}},
		{name: "tolerations and scheduling gates appended once",
			child: func(p *corev1.PodTemplateSpec) { p.Spec.Tolerations = []corev1.Toleration{spot} },
			role: func(p *corev1.PodTemplateSpec) {
				p.Spec.Tolerations = []corev1.Toleration{spot, {Key: "gpu", Operator: corev1.TolerationOpExists, TolerationSeconds: ptr.To[int64](30)}}
				p.Spec.SchedulingGates = []corev1.PodSchedulingGate{gate}
			},
			want: func(p *corev1.PodTemplateSpec) {
				p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists, TolerationSeconds: ptr.To[int64](30)})
				p.Spec.SchedulingGates = []corev1.PodSchedulingGate{gate}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &world{t: t, in: leaderWorkers(1)}
			w.in.Suspend = true
			w.sync(t0)
			child := w.job("js-workers-0")
			if tt.child != nil {
				tt.child(&child.Spec.Template)
			}
			before := child.DeepCopy()
			tt.role(&w.in.Templates[1].Spec.Template)

			w.in.Suspend = false
			p := w.sync(t0.Add(time.Minute))
			var got *batchv1.Job
			for _, a := range p.Resume {
				if a.Job.Name == "js-workers-0" {
					got = a.Job
				}
			}
			require.NotNil(t, got, "js-workers-0 is resumed")
			assert.Equal(t, before, child, "the Input's Job is not modified")
			if tt.want == nil {
				assert.Same(t, child, got, "nothing to write but spec.suspend")
				return
			}
			want := before.Spec.Template.DeepCopy()
			tt.want(want)
			assert.Equal(t, *want, got.Spec.Template)
			assert.Equal(t, before.Spec.Template.Spec.Containers, got.Spec.Template.Spec.Containers, "the rest of the template stays")
			assert.Equal(t, w.job("js-workers-0").Spec.Template, got.Spec.Template, "the world applied the write")
		})
	}
}
