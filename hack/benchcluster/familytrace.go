package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// statusTrace records every change of a Job's status seen through a watch, one line
// each: the controller's status writes in order (a family's log says which sync
// wrote what).
type statusTrace struct {
	mu    sync.Mutex
	lines []string
	done  chan struct{}
	w     watch.Interface
}

// traceStatus watches the Job name of b's namespace from now on.
func (b *bench) traceStatus(ctx context.Context, name string, start time.Time) (*statusTrace, error) {
	w, err := b.cs.BatchV1().Jobs(b.namespace).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		return nil, err
	}
	t := &statusTrace{done: make(chan struct{}), w: w}
	go func() {
		defer close(t.done)
		last := ""
		for ev := range w.ResultChan() {
			j, ok := ev.Object.(*batchv1.Job)
			if !ok {
				continue
			}
			line := statusLine(j)
			if ev.Type == watch.Deleted {
				line = "deleted"
			}
			if line == last {
				continue
			}
			last = line
			t.mu.Lock()
			t.lines = append(t.lines, fmt.Sprintf("%6.2fs %s", time.Since(start).Seconds(), line))
			t.mu.Unlock()
		}
	}()
	return t, nil
}

// statusLine is the part of a Job's status that its controller writes.
func statusLine(j *batchv1.Job) string {
	st := j.Status
	var b strings.Builder
	fmt.Fprintf(&b, "active=%d ready=%d terminating=%d succeeded=%d failed=%d", st.Active, ptr.Deref(st.Ready, 0),
		ptr.Deref(st.Terminating, 0), st.Succeeded, st.Failed)
	if u := st.UncountedTerminatedPods; u != nil && len(u.Succeeded)+len(u.Failed) > 0 {
		fmt.Fprintf(&b, " uncounted=%d/%d", len(u.Succeeded), len(u.Failed))
	}
	if st.CompletedIndexes != "" {
		fmt.Fprintf(&b, " completed=%s", st.CompletedIndexes)
	}
	if st.FailedIndexes != nil && *st.FailedIndexes != "" {
		fmt.Fprintf(&b, " failedIndexes=%s", *st.FailedIndexes)
	}
	if st.StartTime == nil {
		b.WriteString(" no-startTime")
	}
	if len(st.Conditions) > 0 {
		b.WriteString(" " + conditionSummary(st.Conditions))
	}
	return b.String()
}

// finish stops the watch and writes the lines to path.
func (t *statusTrace) finish(path string) error {
	t.w.Stop()
	<-t.done
	t.mu.Lock()
	defer t.mu.Unlock()
	return os.WriteFile(path, []byte(strings.Join(t.lines, "\n")+"\n"), 0o644)
}
