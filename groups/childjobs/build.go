package childjobs

import (
	"maps"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// newChild returns the child Job of identity id, built from the template of
// role r: JobSet's labels on the Job and its pods (and, as JobSet writes them, as
// annotations too), the namespaced-job annotation, the controller reference,
// the webhook's template defaults (completionMode Indexed, restartPolicy
// OnFailure), the subdomain with DNS hostnames, a volume for each volume
// claim the role mounts, the exclusive placement of the role (place), managedBy
// when asked, and spec.suspend when the group
// is suspended. The template is copied, never
// shared.
func (s *sync) newChild(id *plaingroup.Identity, r int) *batchv1.Job {
	in := s.in
	tmpl := &in.Templates[r]
	keys := id.Labels(in.Name, string(in.UID), in.Namespace, s.coordinator)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:            id.Name,
			Namespace:       in.Namespace,
			Labels:          merged(tmpl.Labels, keys),
			Annotations:     merged(tmpl.Annotations, keys),
			OwnerReferences: []metav1.OwnerReference{s.ownerRef()},
		},
		Spec: *tmpl.Spec.DeepCopy(),
	}
	job.Annotations[plaingroup.AnnotationNamespacedJob] = in.Namespace + "_" + id.Name
	spec := &job.Spec
	spec.Template.Annotations = merged(spec.Template.Annotations, keys)
	// keys is this child's own map: it becomes the pod template's labels, the
	// template's pod labels under JobSet's keys.
	for k, v := range spec.Template.Labels {
		if _, ok := keys[k]; !ok {
			keys[k] = v
		}
	}
	spec.Template.Labels = keys
	defaultTemplate(spec)
	if s.dns {
		spec.Template.Spec.Subdomain = s.spec.Subdomain
	}
	s.claimVolumes(&spec.Template.Spec, r)
	s.place(job, r)
	if in.ChildManagedBy != "" {
		spec.ManagedBy = ptr.To(in.ChildManagedBy)
	}
	spec.Suspend = ptr.To(in.Suspend)
	return job
}

// merged returns a new map of base with extra over it.
func merged(base, extra map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(extra)+1)
	maps.Copy(out, base)
	maps.Copy(out, extra)
	return out
}

// newService returns the headless Service that gives the pods their DNS names:
// named after the subdomain, selecting the group's pods by the jobset-name
// label, publishing not-ready addresses unless the network says otherwise.
func (s *sync) newService() *corev1.Service {
	in := s.in
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:            s.spec.Subdomain,
			Namespace:       in.Namespace,
			Labels:          map[string]string{plaingroup.LabelJobSetName: in.Name},
			OwnerReferences: []metav1.OwnerReference{s.ownerRef()},
		},
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 map[string]string{plaingroup.LabelJobSetName: in.Name},
			PublishNotReadyAddresses: ptr.Deref(in.PublishNotReadyAddresses, true),
		},
	}
}

// ownerRef returns the controller reference to the group, a copy per object so
// that no two objects of a plan share memory.
func (s *sync) ownerRef() metav1.OwnerReference {
	return s.kind.NewControllerRef(&metav1.ObjectMeta{Name: s.in.Name, UID: s.in.UID})
}

// claims plans the group's volume claims that are not in the cache.
func (s *sync) claims() {
	in := s.in
	for k := range s.spec.VolumeClaims {
		c := &s.spec.VolumeClaims[k]
		name := c.ClaimName(in.Name)
		if slices.Contains(in.ExistingClaims, name) {
			continue
		}
		t := &in.ClaimTemplates[k]
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{
				Name:        name,
				Namespace:   in.Namespace,
				Labels:      merged(t.Labels, map[string]string{plaingroup.LabelJobSetName: in.Name}),
				Annotations: maps.Clone(t.Annotations),
			},
			Spec: *t.Spec.DeepCopy(),
		}
		if c.Owned() {
			pvc.OwnerReferences = []metav1.OwnerReference{s.ownerRef()}
		}
		s.plan.Claims = append(s.plan.Claims, pvc)
	}
}

// claimVolumes appends to the pod spec a volume per claim that role r mounts,
// each naming its claim.
func (s *sync) claimVolumes(pod *corev1.PodSpec, r int) {
	for _, k := range s.spec.Claims(r) {
		c := &s.spec.VolumeClaims[k]
		pod.Volumes = append(pod.Volumes, corev1.Volume{Name: c.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c.ClaimName(s.in.Name)},
		}})
	}
}

// budget plans the group's PodDisruptionBudget when it has one and it is not
// in the cache.
func (s *sync) budget() {
	in := s.in
	if in.DisruptionBudget == nil || in.DisruptionBudgetExists {
		return
	}
	selector := map[string]string{plaingroup.LabelJobSetName: in.Name, plaingroup.LabelJobSetUID: string(in.UID)}
	limit := *in.DisruptionBudget
	always := policyv1.AlwaysAllow
	s.plan.DisruptionBudget = &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{
			Name:            in.Name,
			Namespace:       in.Namespace,
			Labels:          map[string]string{plaingroup.LabelJobSetName: in.Name},
			OwnerReferences: []metav1.OwnerReference{s.ownerRef()},
		},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: &limit,
			Selector:       &metav1.LabelSelector{MatchLabels: selector},
			// A pod that is not ready is not running the training: evicting
			// it costs nothing, and a drain must not wait for it.
			UnhealthyPodEvictionPolicy: &always,
		},
	}
}
