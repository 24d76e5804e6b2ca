package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// config is what the agent is told.
type config struct {
	namespace, pod, owner string
	resource              schema.GroupVersionResource
	// previousField and currentField are the paths of the group's attempts
	// in its object.
	previousField, currentField []string
	exitCode                    int
	address                     string
	// resync is how often the group is read again whatever the watch says
	// (an event missed between a read and a watch); zero means 30s.
	resync time.Duration
}

// agent is one pod's agent: the attempt it reported, and whether its barrier
// has lifted. It serves the barrier (ServeHTTP) while run watches the group.
type agent struct {
	cfg    config
	owners dynamic.ResourceInterface
	pods   corev1client.PodInterface
	lifted atomic.Bool
	// attempt is the attempt the pod reported: set once, at start.
	attempt int32
}

func newAgent(cfg config, owners dynamic.ResourceInterface, pods corev1client.PodInterface) *agent {
	return &agent{cfg: cfg, owners: owners, pods: pods}
}

// step is the agent's decision on one read of the group, given the attempt
// its pod reported: restart the pod's containers when the group's previous
// attempt has reached it, lift the barrier when the current attempt is it.
func step(attempt int32, previous, current *int32) (restart, lift bool) {
	if previous != nil && attempt <= *previous {
		return true, false
	}
	return false, current != nil && *current == attempt
}

// run reports the pod's attempt and watches the group until the pod must
// restart (it returns the restart exit code) or ctx ends (0). A group that
// cannot be read or a report the API server refuses is an error (exit code 1).
func (a *agent) run(ctx context.Context) (int, error) {
	obj, err := a.owners.Get(ctx, a.cfg.owner, metav1.GetOptions{})
	if err != nil {
		return 1, fmt.Errorf("read the group: %w", err)
	}
	_, current, err := a.attempts(obj)
	if err != nil {
		return 1, err
	}
	if current != nil {
		a.attempt = *current + 1
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, plaingroup.AnnotationInPlaceRestartAttempt, strconv.Itoa(int(a.attempt)))
	if _, err := a.pods.Patch(ctx, a.cfg.pod, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return 1, fmt.Errorf("report attempt %d on pod %s: %w", a.attempt, a.cfg.pod, err)
	}
	for {
		if done, err := a.decide(obj); err != nil {
			return 1, err
		} else if done {
			return a.cfg.exitCode, nil
		}
		w, err := a.owners.Watch(ctx, metav1.ListOptions{
			FieldSelector:   fields.OneTermEqualSelector("metadata.name", a.cfg.owner).String(),
			ResourceVersion: obj.GetResourceVersion(),
		})
		if err != nil {
			if ctx.Err() != nil {
				return 0, nil
			}
			time.Sleep(time.Second)
		} else {
			restart, err := a.follow(ctx, w)
			w.Stop()
			if err != nil {
				return 1, err
			}
			if restart {
				return a.cfg.exitCode, nil
			}
		}
		if ctx.Err() != nil {
			return 0, nil
		}
		// The watch ended (expired, closed, or time to resync): read the
		// group again.
		if obj, err = a.owners.Get(ctx, a.cfg.owner, metav1.GetOptions{}); err != nil {
			if ctx.Err() != nil {
				return 0, nil
			}
			return 1, fmt.Errorf("read the group: %w", err)
		}
	}
}

// follow handles the events of one watch until it ends; restart says the pod
// must restart.
func (a *agent) follow(ctx context.Context, w watch.Interface) (restart bool, err error) {
	resync := a.cfg.resync
	if resync <= 0 {
		resync = 30 * time.Second
	}
	timer := time.NewTimer(resync)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return false, nil
		case <-timer.C:
			return false, nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return false, nil
			}
			obj, isObj := ev.Object.(*unstructured.Unstructured)
			switch {
			case ev.Type == watch.Deleted && isObj && obj.GetName() == a.cfg.owner:
				return false, fmt.Errorf("the group %s was deleted", a.cfg.owner)
			case (ev.Type == watch.Added || ev.Type == watch.Modified) && isObj && obj.GetName() == a.cfg.owner:
				if done, err := a.decide(obj); done || err != nil {
					return done, err
				}
			}
		}
	}
}

// decide applies step to one read of the group; done says the pod must
// restart.
func (a *agent) decide(obj *unstructured.Unstructured) (done bool, err error) {
	previous, current, err := a.attempts(obj)
	if err != nil {
		return false, err
	}
	restart, lift := step(a.attempt, previous, current)
	if lift {
		a.lifted.Store(true)
	}
	return restart, nil
}

// attempts reads the group's previous and current attempts; nil is unset.
func (a *agent) attempts(obj *unstructured.Unstructured) (previous, current *int32, err error) {
	read := func(path []string) (*int32, error) {
		v, found, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
		if err != nil || !found || v == nil {
			return nil, err
		}
		var n int64
		switch x := v.(type) {
		case int64:
			n = x
		case float64:
			n = int64(x)
		default:
			return nil, fmt.Errorf("%T", v)
		}
		if n < 0 || n > 1<<31-1 {
			return nil, fmt.Errorf("%d is out of range", n)
		}
		out := int32(n)
		return &out, nil
	}
	if previous, err = read(a.cfg.previousField); err != nil {
		return nil, nil, fmt.Errorf("the group's previous attempt: %w", err)
	}
	if current, err = read(a.cfg.currentField); err != nil {
		return nil, nil, fmt.Errorf("the group's current attempt: %w", err)
	}
	return previous, current, nil
}

// ServeHTTP answers the startup probe: 200 on /barrier-is-lifted once the
// barrier has lifted, 503 before; 404 elsewhere.
func (a *agent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/barrier-is-lifted" {
		http.NotFound(w, r)
		return
	}
	if !a.lifted.Load() {
		http.Error(w, "the barrier holds: attempt "+strconv.Itoa(int(a.attempt)), http.StatusServiceUnavailable)
		return
	}
	_, _ = fmt.Fprintf(w, "attempt %d\n", a.attempt)
}
