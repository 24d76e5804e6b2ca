package childjobs_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobkit/jobkit/groups/childjobs"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// withClaims gives the group of leaderWorkers(2) two claims: "data" (kept,
// Retain) mounted by the workers' container, and "cache" (Delete, the
// default) mounted by the workers' init container.
func withClaims() *childjobs.Input {
	in := leaderWorkers(2)
	pod := &in.Templates[1].Spec.Template.Spec
	pod.InitContainers = []corev1.Container{{Name: "warm", Image: "busybox", VolumeMounts: []corev1.VolumeMount{{Name: "cache", MountPath: "/cache"}}}}
	pod.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	claim := func(name string) corev1.PersistentVolumeClaim {
		return corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"tier": "shared"}, Annotations: map[string]string{"note": name}},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
	}
	in.Spec.VolumeClaims = []plaingroup.VolumeClaim{{Policy: 0, Template: 0, WhenDeleted: "Retain"}, {Policy: 1, Template: 0}}
	in.ClaimTemplates = []corev1.PersistentVolumeClaim{claim("data"), claim("cache")}
	return in
}

func TestClaimsCreated(t *testing.T) {
	in := withClaims()
	p, err := childjobs.Compute(in)
	require.NoError(t, err)
	require.Len(t, p.Claims, 2)

	data, cache := p.Claims[0], p.Claims[1]
	assert.Equal(t, "data-js", data.Name)
	assert.Equal(t, "ns", data.Namespace)
	assert.Equal(t, map[string]string{"tier": "shared", "jobset.sigs.k8s.io/jobset-name": "js"}, data.Labels)
	assert.Equal(t, map[string]string{"note": "data"}, data.Annotations)
	assert.Equal(t, in.ClaimTemplates[0].Spec, data.Spec)
	assert.Empty(t, data.OwnerReferences, "Retain: the claim outlives the group")
	require.Len(t, cache.OwnerReferences, 1, "Delete: the group controls the claim")
	assert.Equal(t, "JobSet", cache.OwnerReferences[0].Kind)
	assert.Equal(t, "js-uid", string(cache.OwnerReferences[0].UID))
	assert.True(t, *cache.OwnerReferences[0].Controller)
	assert.Empty(t, in.ClaimTemplates[0].Labels["jobset.sigs.k8s.io/jobset-name"], "the template is not modified")
	assert.Contains(t, p.String(), "create 2 claims: data-js, cache-js")

	// The workers' pods get both volumes, the leader's none.
	for _, a := range p.Create {
		vols := a.Job.Spec.Template.Spec.Volumes
		if a.Job.Labels[plaingroup.LabelRoleName] == "leader" {
			assert.Empty(t, vols, a.Job.Name)
			continue
		}
		assert.Equal(t, []corev1.Volume{
			{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-js"}}},
			{Name: "cache", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "cache-js"}}},
		}, vols, a.Job.Name)
	}
	assert.Empty(t, in.Templates[1].Spec.Template.Spec.Volumes, "the template is not modified")
}

func TestClaimsInTheCacheAreNotPlanned(t *testing.T) {
	w := &world{t: t, in: withClaims()}
	w.in.ExistingClaims = []string{"data-js"}
	p := w.sync(t0)
	require.Len(t, p.Claims, 1)
	assert.Equal(t, "cache-js", p.Claims[0].Name)

	// A suspended group has its claims too; a finished one plans none.
	w.in.ExistingClaims = nil
	w.in.Suspend = true
	assert.Len(t, w.sync(t0.Add(time.Second)).Claims, 2)
	w.in.Suspend = false
	for _, n := range []string{"js-leader-0", "js-workers-0", "js-workers-1"} {
		w.finish(n, batchv1.JobComplete, "Completed", "", t0.Add(time.Minute))
	}
	w.sync(t0.Add(time.Minute))
	assert.Empty(t, w.sync(t0.Add(2*time.Minute)).Claims)
}

func TestClaimTemplatesCount(t *testing.T) {
	in := withClaims()
	in.ClaimTemplates = in.ClaimTemplates[:1]
	_, err := childjobs.Compute(in)
	assert.ErrorContains(t, err, "Input.ClaimTemplates")
}

func TestValidateClaimsFromTemplates(t *testing.T) {
	in := withClaims()
	assert.Empty(t, in.Validate())

	in.Templates[1].Spec.Template.Spec.InitContainers = nil
	in.Templates[0].Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "data"}}
	in.ClaimTemplates[0].Namespace = "other"
	var got []string
	for _, e := range in.Validate() {
		got = append(got, e.Error())
	}
	assert.Equal(t, []string{
		`spec.volumeClaimPolicies[0]: Invalid value: "other": namespace cannot be set for VolumeClaimPolicies templates`,
		`spec.replicatedJobs[0].template.spec.template.spec.volumes[0].name: Invalid value: "data": volume name conflicts with VolumeClaimPolicy template name: data`,
		`spec.replicatedJobs: Invalid value: null: replicatedJob containers don't have a matching volumeMount: cache from VolumeClaimPolicies`,
	}, got)

	old := withClaims()
	old.Default()
	upd := withClaims()
	upd.Default()
	assert.Empty(t, upd.ValidateUpdate(old))
	upd.ClaimTemplates[1].Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	errs := upd.ValidateUpdate(old)
	require.Len(t, errs, 1)
	assert.Equal(t, "spec.volumeClaimPolicies: Invalid value: Value is immutable", errs[0].Error())
}
