package childjobs

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// JobSet's keys of exclusive placement: the annotations a user sets on the
// group or on a role's Job template, and the node label and taint of the
// node-selector strategy (the label's key is also the namespaced-job
// annotation's, plaingroup.AnnotationNamespacedJob).
const (
	annotationExclusiveTopology = "alpha.jobset.sigs.k8s.io/exclusive-topology"
	annotationNodeSelector      = "alpha.jobset.sigs.k8s.io/node-selector"
	taintNoSchedule             = "alpha.jobset.sigs.k8s.io/no-schedule"
	labelJobKey                 = "jobset.sigs.k8s.io/job-key"
)

// place gives the child job of role r its exclusive placement, as JobSet
// does without its pod webhook: the two annotations on the Job and its pod
// template, then either the node-selector strategy (a nodeSelector on the
// namespaced-job node label, and a toleration of the no-schedule taint) or,
// on every pod, a required pod affinity to the pods of the same child and a
// required anti-affinity to the pods of any other child, both over the
// topology key and in every namespace. job's maps are its own.
func (s *sync) place(job *batchv1.Job, r int) {
	topology, nodeSelector := s.spec.Exclusive(r)
	if topology == "" {
		return
	}
	pod := &job.Spec.Template
	for _, m := range []map[string]string{job.Annotations, pod.Annotations} {
		m[annotationExclusiveTopology] = topology
		if nodeSelector {
			m[annotationNodeSelector] = "true"
		}
	}
	ps := &pod.Spec
	if nodeSelector {
		if ps.NodeSelector == nil {
			ps.NodeSelector = map[string]string{}
		}
		ps.NodeSelector[plaingroup.AnnotationNamespacedJob] = job.Namespace + "_" + job.Name
		ps.Tolerations = append(ps.Tolerations, corev1.Toleration{Key: taintNoSchedule, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
		return
	}
	key := pod.Labels[labelJobKey]
	if ps.Affinity == nil {
		ps.Affinity = &corev1.Affinity{}
	}
	a := ps.Affinity
	if a.PodAffinity == nil {
		a.PodAffinity = &corev1.PodAffinity{}
	}
	if a.PodAntiAffinity == nil {
		a.PodAntiAffinity = &corev1.PodAntiAffinity{}
	}
	a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
		corev1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: labelJobKey, Operator: metav1.LabelSelectorOpIn, Values: []string{key}},
			}},
			TopologyKey: topology, NamespaceSelector: &metav1.LabelSelector{},
		})
	a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
		corev1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: labelJobKey, Operator: metav1.LabelSelectorOpExists},
				{Key: labelJobKey, Operator: metav1.LabelSelectorOpNotIn, Values: []string{key}},
			}},
			TopologyKey: topology, NamespaceSelector: &metav1.LabelSelector{},
		})
}
