package scenarios

import (
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/owner"
)

// --- Pods ---

// podsOf lists the pods of the Job name (by the job-name label), oldest first.
func (s *scenario) podsOf(name string) []*corev1.Pod {
	s.t.Helper()
	list, err := s.cs.CoreV1().Pods(s.ns).List(s.ctx, metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=" + name})
	if err != nil {
		s.t.Fatalf("list pods: %v", err)
	}
	pods := make([]*corev1.Pod, 0, len(list.Items))
	for i := range list.Items {
		pods = append(pods, &list.Items[i])
	}
	slices.SortFunc(pods, func(a, b *corev1.Pod) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return pods
}

// waitPods waits until the pods of the Job name satisfy cond and returns them.
func (s *scenario) waitPods(name, what string, cond func([]*corev1.Pod) bool) []*corev1.Pod {
	s.t.Helper()
	var pods []*corev1.Pod
	s.eventually("pods of "+name+": "+what, func() (bool, string) {
		pods = s.podsOf(name)
		return cond(pods), s.describePods(name)
	})
	return pods
}

// waitRunning waits until exactly n pods of the Job name are running and not being
// deleted, and returns them.
func (s *scenario) waitRunning(name string, n int) []*corev1.Pod {
	s.t.Helper()
	var running []*corev1.Pod
	s.waitPods(name, fmt.Sprintf("%d running", n), func(pods []*corev1.Pod) bool {
		running = filter(pods, isRunning)
		return len(running) == n && len(filter(pods, isPending)) == 0
	})
	return running
}

func (s *scenario) describePods(name string) string {
	list, err := s.cs.CoreV1().Pods(s.ns).List(s.ctx, metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=" + name})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range list.Items {
		fmt.Fprintf(&b, "  pod %s index=%s phase=%s deleting=%v finalizers=%v owner=%v\n", p.Name,
			p.Labels[batchv1.JobCompletionIndexAnnotation], p.Status.Phase, p.DeletionTimestamp != nil, p.Finalizers, ownerUID(&p))
	}
	return b.String()
}

func filter(pods []*corev1.Pod, keep func(*corev1.Pod) bool) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if keep(p) {
			out = append(out, p)
		}
	}
	return out
}

func isRunning(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil
}

func isPending(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodPending && p.DeletionTimestamp == nil
}

func hasFinalizer(p *corev1.Pod) bool {
	return owner.BatchJob.HasFinalizer(p)
}

func indexOf(p *corev1.Pod) string { return p.Labels[batchv1.JobCompletionIndexAnnotation] }

func ownerUID(p *corev1.Pod) types.UID {
	if ref := metav1.GetControllerOf(p); ref != nil {
		return ref.UID
	}
	return ""
}

// podWithIndex returns the running pod of index i among pods.
func podWithIndex(pods []*corev1.Pod, i string) *corev1.Pod {
	for _, p := range pods {
		if indexOf(p) == i && isRunning(p) {
			return p
		}
	}
	return nil
}

// finish ends the running pod with o, through the kubelet.
func (s *scenario) finish(pod *corev1.Pod, o outcome) {
	s.t.Helper()
	if pod == nil {
		s.t.Fatal("finish: no such pod")
	}
	if err := s.kubelet.finish(s.ctx, pod, o); err != nil {
		s.t.Fatalf("kubelet: end pod %s: %v", pod.Name, err)
	}
}

// succeedAll makes every running pod succeed from now on.
func (s *scenario) succeedAll() {
	s.kubelet.setPolicy(func(*corev1.Pod) outcome { return succeed })
}
