package controller_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/examples/jobset/api/v1alpha2"
)

// A JobSet with two volume claim policies (one retained) runs on the API
// server: the controller creates each claim once, named <claim>-<jobset>,
// the deleted-with-the-group one controlled by the JobSet and the retained
// one not, and every child's pods mount them by that name; the group
// completes.
func TestVolumeClaimPoliciesCreateTheClaims(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.setPolicy(succeedAll)
	claim := func(name string) corev1.PersistentVolumeClaim {
		return corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
	}
	js := e.jobSet("vol", role("leader", 1, 1), role("workers", 2, 1))
	js.Spec.VolumeClaimPolicies = []v1alpha2.VolumeClaimPolicy{
		{Templates: []corev1.PersistentVolumeClaim{claim("data")}},
		{Templates: []corev1.PersistentVolumeClaim{claim("out")},
			RetentionPolicy: &v1alpha2.VolumeRetentionPolicy{WhenDeleted: new(v1alpha2.RetentionPolicyRetain)}},
	}
	for i := range js.Spec.ReplicatedJobs {
		c := &js.Spec.ReplicatedJobs[i].Template.Spec.Template.Spec.Containers[0]
		c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "out", MountPath: "/out"}}
	}
	e.create(js)
	got := e.waitFinished("vol")
	if got.Status.TerminalState != v1alpha2.Completed {
		t.Fatalf("status = %+v, want Completed", got.Status)
	}
	for name, owned := range map[string]bool{"data-vol": true, "out-vol": false} {
		pvc := &corev1.PersistentVolumeClaim{}
		if err := k8s.Get(t.Context(), types.NamespacedName{Namespace: e.ns, Name: name}, pvc); err != nil {
			t.Fatalf("claim %s: %v", name, err)
		}
		ref := metav1.GetControllerOf(pvc)
		if owned != (ref != nil && ref.UID == got.UID) {
			t.Errorf("claim %s controlled by %+v, want the JobSet's controller reference %v", name, ref, owned)
		}
		if pvc.Spec.Resources.Requests.Storage().String() != "1Gi" {
			t.Errorf("claim %s requests %v, want the template's 1Gi", name, pvc.Spec.Resources.Requests)
		}
	}
	poll.Eventually(t, "every child's pods mount the claims", func() (bool, string) {
		jobs := e.jobs()
		if len(jobs) != 3 {
			return false, fmt.Sprintf("%d Jobs", len(jobs))
		}
		for _, j := range jobs {
			claims := map[string]string{}
			for _, v := range j.Spec.Template.Spec.Volumes {
				if v.PersistentVolumeClaim != nil {
					claims[v.Name] = v.PersistentVolumeClaim.ClaimName
				}
			}
			if claims["data"] != "data-vol" || claims["out"] != "out-vol" {
				return false, fmt.Sprintf("Job %s mounts %v", j.Name, claims)
			}
		}
		return true, ""
	})
}
