package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// collectGarbage plays the garbage collector, which does not run here: a Job
// being deleted in the foreground has its pods deleted and loses the
// foregroundDeletion finalizer once they are gone; a pod whose Job is gone is
// deleted.
func (g *groupChaos) collectGarbage(ctx context.Context) {
	pods, jobs := g.cs.CoreV1().Pods(g.namespace), g.cs.BatchV1().Jobs(g.namespace)
	for sleepFor(ctx, 300*time.Millisecond) == nil {
		pl, err := pods.List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		jl, err := jobs.List(ctx, metav1.ListOptions{}) // after the pods: a pod's Job created later is not in pl
		if err != nil {
			continue
		}
		owned := map[types.UID][]*corev1.Pod{}
		for i := range pl.Items {
			p := &pl.Items[i]
			if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
				owned[ref.UID] = append(owned[ref.UID], p)
			}
		}
		live := map[types.UID]bool{}
		for i := range jl.Items {
			j := &jl.Items[i]
			live[j.UID] = true
			// The garbage collector's own finalizer, not the Job controllers' tracking one.
			if j.DeletionTimestamp == nil || slices.Index(j.Finalizers, metav1.FinalizerDeleteDependents) < 0 {
				continue
			}
			for _, p := range owned[j.UID] {
				if p.DeletionTimestamp == nil {
					_ = pods.Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
				}
			}
			if len(owned[j.UID]) == 0 {
				left := slices.DeleteFunc(slices.Clone(j.Finalizers), func(f string) bool { return f == metav1.FinalizerDeleteDependents })
				patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q,"finalizers":%s}}`, j.ResourceVersion, jsonList(left))
				if _, err := jobs.Patch(ctx, j.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
					g.logf("garbage collector: remove foregroundDeletion from Job %s: %v", j.Name, err)
				}
			}
		}
		for uid, ps := range owned {
			if live[uid] {
				continue
			}
			for _, p := range ps {
				if p.DeletionTimestamp == nil {
					_ = pods.Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
				}
			}
		}
	}
}

func jsonList(s []string) string {
	out := "["
	for i, v := range s {
		if i > 0 {
			out += ","
		}
		out += strconv.Quote(v)
	}
	return out + "]"
}
