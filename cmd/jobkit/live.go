package main

import (
	"context"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/jobkit/jobkit/cmd/jobkit/explain"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
)

// loadLive reads the Job namespace/name from the cluster of the kubeconfig (found
// as kubectl finds it: kubeconfigPath, else $KUBECONFIG, else ~/.kube/config), and
// its pods.
func loadLive(ctx context.Context, kubeconfigPath, kubeContext, namespace, name string) (*batchv1.Job, []*corev1.Pod, error) {
	cfg, namespace, err := clientConfig(kubeconfigPath, kubeContext, namespace)
	if err != nil {
		return nil, nil, err
	}
	return readLive(ctx, cfg, namespace, name)
}

// loadLiveOwner is loadLive for an owner of another kind (readLiveOwner).
func loadLiveOwner(ctx context.Context, kubeconfigPath, kubeContext, namespace, name string, kind owner.Kind, m explain.Mapping) (plan.Workload, []*corev1.Pod, error) {
	cfg, namespace, err := clientConfig(kubeconfigPath, kubeContext, namespace)
	if err != nil {
		return plan.Workload{}, nil, err
	}
	return readLiveOwner(ctx, cfg, namespace, name, kind, m)
}

// clientConfig finds the kubeconfig as kubectl does (kubeconfigPath, else
// $KUBECONFIG, else ~/.kube/config), and the namespace: the given one, else the
// context's.
func clientConfig(kubeconfigPath, kubeContext, namespace string) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfigPath
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext})
	if namespace == "" {
		ns, _, err := cc.Namespace()
		if err != nil {
			return nil, "", fmt.Errorf("kubeconfig: %w", err)
		}
		namespace = ns
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	return cfg, namespace, nil
}

// readLiveOwner reads the owner namespace/name of kind through the dynamic client
// (its resource found by discovery of kind's group and version) as
// explain.WorkloadOf does with m, and the pods of its namespace that concern it: those
// controlled by it (by owner reference: a custom controller's pods carry no label
// jobkit knows, so the namespace's pods are listed once), the orphans that match
// its selector and the pods of an earlier owner of the same name.
func readLiveOwner(ctx context.Context, cfg *rest.Config, namespace, name string, kind owner.Kind, m explain.Mapping) (plan.Workload, []*corev1.Pod, error) {
	what := fmt.Sprintf("%s %s/%s", kind, namespace, name)
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return plan.Workload{}, nil, err
	}
	gv := kind.GroupVersionKind().GroupVersion()
	list, err := dc.ServerResourcesForGroupVersion(gv.String())
	if err != nil {
		return plan.Workload{}, nil, liveError(fmt.Sprintf("--owner-kind: the resources of %s", gv), err)
	}
	var resource *metav1.APIResource
	for i := range list.APIResources {
		if r := &list.APIResources[i]; r.Kind == kind.Kind && !strings.Contains(r.Name, "/") {
			resource = r
			break
		}
	}
	if resource == nil {
		return plan.Workload{}, nil, fmt.Errorf("--owner-kind: the cluster serves no kind %s in %s", kind.Kind, gv)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return plan.Workload{}, nil, err
	}
	if !resource.Namespaced {
		return plan.Workload{}, nil, fmt.Errorf("--owner-kind: %s is cluster-scoped: an owner of pods is namespaced, as its pods", kind)
	}
	obj, err := dyn.Resource(gv.WithResource(resource.Name)).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return plan.Workload{}, nil, liveError(what, err)
	}
	w, err := explain.WorkloadOf(obj, m)
	if err != nil {
		return plan.Workload{}, nil, err
	}
	var selector labels.Selector
	if w.Spec.Selector != nil {
		if selector, err = metav1.LabelSelectorAsSelector(w.Spec.Selector); err != nil {
			return plan.Workload{}, nil, fmt.Errorf("%s: spec.selector: %w", what, err)
		}
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return plan.Workload{}, nil, err
	}
	l, err := cs.CoreV1().Pods(w.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return plan.Workload{}, nil, liveError("pods of "+what, err)
	}
	var pods []*corev1.Pod
	for i := range l.Items {
		p := &l.Items[i]
		ref := metav1.GetControllerOfNoCopy(p)
		switch {
		case ref != nil && (ref.UID == w.UID || (kind.Matches(ref) && ref.Name == w.Name)),
			ref == nil && selector != nil && selector.Matches(labels.Set(p.Labels)):
			pods = append(pods, p)
		}
	}
	return w, pods, nil
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
