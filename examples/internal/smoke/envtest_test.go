// Package smoke checks that the integration environment works: the API server starts
// and enforces the Job status rules that jobkit's controllers must respect.
package smoke

import (
	"context"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/controllerruntime/testenv"
)

func TestAPIServerEnforcesJobStatusRules(t *testing.T) {
	env, cfg, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	cs := kubernetes.NewForConfigOrDie(cfg)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "default"}, Spec: batchv1.JobSpec{
		ManagedBy: ptr.To("jobkit.dev/job-controller"),
		Template:  corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "x"}}}}}}
	got, err := cs.BatchV1().Jobs("default").Create(context.Background(), job, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}
	_, err = cs.BatchV1().Jobs("default").UpdateStatus(context.Background(), got, metav1.UpdateOptions{})
	if err == nil || !strings.Contains(err.Error(), "cannot set Failed=True condition without the FailureTarget=true condition") {
		t.Fatalf("UpdateStatus(Failed without FailureTarget) = %v, want the API server's rejection", err)
	}
}
