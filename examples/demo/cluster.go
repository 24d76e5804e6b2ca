package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/jobkit/jobkit/examples/controllerruntime"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/reconcile"
)

type clusterOptions struct {
	kubeconfig string
	managedBy  string
	namespace  string
	image      string
	keep       bool
	// backoff is the pod failure backoff; zero means upstream's (10s doubling).
	backoff plainbackoff.Policy
}

// runCluster runs the demo on the cluster of o.kubeconfig.
func runCluster(ctx context.Context, w io.Writer, o clusterOptions) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return fmt.Errorf("loading %s: %w", o.kubeconfig, err)
	}
	return runOnCluster(ctx, w, cfg, o)
}

// runOnCluster starts the controller-runtime controller in-process, creates the demo
// Job, prints its progress from the controller's cache until it has finished and all
// its pods are counted, and deletes it unless o.keep.
func runOnCluster(ctx context.Context, w io.Writer, cfg *rest.Config, o clusterOptions) error {
	// The progress lines are the output: controller-runtime's own logs (its
	// informers log to the global logger) are dropped.
	crlog.SetLogger(logr.FromSlogHandler(slog.DiscardHandler))
	var uid atomic.Value // types.UID of the demo Job, once created
	var p atomic.Pointer[progress]
	ours := func(u types.UID) bool { v, _ := uid.Load().(types.UID); return v != "" && v == u }

	run, err := controllerruntime.Start(ctx, cfg,
		controllerruntime.ManagerOptions{ManagedByName: o.managedBy, Logger: logr.Discard()},
		reconcile.Config{Name: o.managedBy, Backoff: o.backoff},
		controllerruntime.Options{OnSync: func(job *batchv1.Job, res reconcile.Result, err error) {
			if pr := p.Load(); pr != nil && ours(job.UID) {
				pr.Sync(time.Now(), res, err)
			}
		}})
	if err != nil {
		return fmt.Errorf("starting the controller: %w", err)
	}
	defer func() { _ = run.Stop() }()
	fmt.Fprintf(w, "jobkit demo on %s: controller-runtime controller for managedBy %s started in-process\n", cfg.Host, o.managedBy)

	c := run.Manager.GetClient()
	job := demoJob(o.namespace, "", o.managedBy, o.image)
	if err := c.Create(ctx, job); err != nil {
		return fmt.Errorf("creating the demo Job: %w", err)
	}
	pr := newProgress(w, job.CreationTimestamp.Time)
	if pr.start.IsZero() {
		pr.start = time.Now()
	}
	uid.Store(job.UID)
	p.Store(pr)
	if !o.keep {
		defer func() {
			// A fresh context: the run's may have ended. Background propagation
			// lets the garbage collector delete the pods.
			dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := c.Delete(dctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err == nil {
				fmt.Fprintf(w, "deleted job %s/%s\n", job.Namespace, job.Name)
			}
		}()
	}

	// Handlers added now get the objects already cached as additions, so nothing
	// since the creation is missed.
	cache := run.Manager.GetCache()
	podInformer, err := cache.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return err
	}
	jobInformer, err := cache.GetInformer(ctx, &batchv1.Job{})
	if err != nil {
		return err
	}
	podEvent := func(obj any, deleted bool) {
		if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		if ref := metav1.GetControllerOfNoCopy(pod); ref != nil && ours(ref.UID) {
			pr.Pod(time.Now(), pod, deleted)
		}
	}
	jobEvent := func(obj any) {
		if j, ok := obj.(*batchv1.Job); ok && ours(j.UID) {
			pr.Job(time.Now(), j)
		}
	}
	podReg, err := podInformer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { podEvent(obj, false) },
		UpdateFunc: func(_, obj any) { podEvent(obj, false) },
		DeleteFunc: func(obj any) { podEvent(obj, true) },
	})
	if err != nil {
		return err
	}
	defer func() { _ = podInformer.RemoveEventHandler(podReg) }()
	jobReg, err := jobInformer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    jobEvent,
		UpdateFunc: func(_, obj any) { jobEvent(obj) },
	})
	if err != nil {
		return err
	}
	defer func() { _ = jobInformer.RemoveEventHandler(jobReg) }()

	select {
	case <-pr.Done():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("the demo Job %s/%s did not finish: %w", job.Namespace, job.Name, ctx.Err())
	}
}
