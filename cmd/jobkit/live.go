package main

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/jobkit/jobkit/owner"
)

// loadLive reads the Job namespace/name from the cluster of the kubeconfig (found
// as kubectl finds it: kubeconfigPath, else $KUBECONFIG, else ~/.kube/config), and
// its pods.
func loadLive(ctx context.Context, kubeconfigPath, kubeContext, namespace, name string) (*batchv1.Job, []*corev1.Pod, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfigPath
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext})
	if namespace == "" {
		ns, _, err := cc.Namespace()
		if err != nil {
			return nil, nil, fmt.Errorf("kubeconfig: %w", err)
		}
		namespace = ns
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return readLive(ctx, cfg, namespace, name)
}

// readLive reads the Job and its pods: those controlled by it (by the
// controller-uid label, then checked by owner reference), the orphans that match its
// selector, and the pods of an earlier Job of the same name (by the job-name label).
func readLive(ctx context.Context, cfg *rest.Config, namespace, name string) (*batchv1.Job, []*corev1.Pod, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	job, err := cs.BatchV1().Jobs(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, liveError(fmt.Sprintf("job %s/%s", namespace, name), err)
	}
	seen := map[types.UID]bool{}
	var pods []*corev1.Pod
	list := func(selector string) error {
		l, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return liveError(fmt.Sprintf("pods of job %s/%s (selector %q)", namespace, name, selector), err)
		}
		for i := range l.Items {
			p := &l.Items[i]
			if seen[p.UID] {
				continue
			}
			seen[p.UID] = true
			pods = append(pods, p)
		}
		return nil
	}
	if err := list(labels.Set{batchv1.ControllerUidLabel: string(job.UID)}.String()); err != nil {
		return nil, nil, err
	}
	// Pods of an earlier Job of this name (deleted, then created again) that may
	// keep the tracking finalizer: the diagnostics name them.
	if err := list(labels.Set{batchv1.JobNameLabel: name}.String()); err != nil {
		return nil, nil, err
	}
	if job.Spec.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
		if err != nil {
			return nil, nil, fmt.Errorf("job %s/%s: spec.selector: %w", namespace, name, err)
		}
		if err := list(sel.String()); err != nil {
			return nil, nil, err
		}
	}
	// Keep the Job's own pods, the orphans and the pods of earlier Jobs of this name;
	// other controllers' pods that share the labels are of no interest here.
	kept := pods[:0]
	for _, p := range pods {
		ref := metav1.GetControllerOfNoCopy(p)
		if ref == nil || ref.UID == job.UID || (owner.BatchJob.Matches(ref) && ref.Name == job.Name) {
			kept = append(kept, p)
		}
	}
	return job, kept, nil
}

// liveError says plainly what went wrong with a read.
func liveError(what string, err error) error {
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%s: not found", what)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%s: no access (forbidden): %w", what, err)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("%s: not authorized (check the kubeconfig credentials): %w", what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}
