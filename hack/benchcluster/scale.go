package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What issue 37 asks of the large cases (10,000 Jobs at once, 100,000 pods): the
// per-Job times of a many-Jobs case, the etcd CPU beside kube-apiserver's, the watch
// events the controller received and its event handlers' CPU per event.

// createWorkers is how many create calls the benchmark has in flight when it creates
// a case's Jobs: with 2,000 Jobs, one at a time would spread "at once" over seconds.
const createWorkers = 16

// createJobs creates the Jobs of case c (createWorkers calls at a time) for the
// controller managedBy (empty: the Job controller) and returns when each create call
// returned, by Job name.
func (b *bench) createJobs(ctx context.Context, c jobCase, managedBy string, seq int) (map[string]time.Time, error) {
	jobs := b.cs.BatchV1().Jobs(b.namespace)
	created := make(map[string]time.Time, c.Jobs)
	var mu sync.Mutex
	err := inParallel(c.Jobs, createWorkers, func(i int) error {
		j := c.job(i, b.namespace, managedBy, b.nodes[(seq+i)%len(b.nodes)])
		if _, err := jobs.Create(ctx, j, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create Job %d of %s: %w", i, c.Name, err)
		}
		mu.Lock()
		created[j.Name] = time.Now()
		mu.Unlock()
		return nil
	})
	return created, err
}

// jobLatencies are the seconds from each Job's create call to its finished condition
// (a Job not in created counts from start), sorted.
func jobLatencies(created, finished map[string]time.Time, start time.Time) []float64 {
	out := make([]float64, 0, len(finished))
	for name, at := range finished {
		from, ok := created[name]
		if !ok || from.After(at) {
			from = start
		}
		out = append(out, at.Sub(from).Seconds())
	}
	slices.Sort(out)
	return out
}

// percentile is the q-th quantile (0 to 1) of the sorted xs, the nearest rank; 0 for
// none.
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// watchEventsMetric counts the events kube-apiserver's watch cache received from
// etcd, by resource: once per change of an object, however many watchers it is sent
// to. A controller that watches every pod and Job receives that many events.
const watchEventsMetric = "apiserver_watch_cache_events_received_total"

// watchedResources are the resources both controllers watch whose events count.
var watchedResources = []string{"pods", "jobs"}

// parseCounterBy reads a Prometheus text exposition and sums the series of the
// metric name by the value of label.
func parseCounterBy(r io.Reader, name, label string) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name+"{")
		if !ok {
			continue
		}
		end := strings.LastIndexByte(rest, '}')
		if end < 0 {
			return nil, fmt.Errorf("%s: no closing brace in %q", name, line)
		}
		labels, err := parseLabels(rest[:end])
		if err != nil {
			return nil, fmt.Errorf("%s: %w in %q", name, err, line)
		}
		fields := strings.Fields(rest[end+1:])
		if len(fields) == 0 {
			return nil, fmt.Errorf("%s: no value in %q", name, line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: value %q: %w", name, fields[0], err)
		}
		out[labels[label]] += v
	}
	return out, sc.Err()
}

// watchEvents sums the watch events of watchedResources in a by-resource count.
func watchEvents(byResource map[string]float64) float64 {
	var n float64
	for _, r := range watchedResources {
		n += byResource[r]
	}
	return n
}

// perEvent is the microseconds of CPU per watch event of seconds spent over events;
// 0 when there were none.
func perEvent(seconds, events float64) float64 {
	if events <= 0 {
		return 0
	}
	return seconds / events * 1e6
}

// The goals of issue 37 against the Job controller (kube-controller-manager), at
// both sizes.
const (
	goalCPU = 0.8 // controller CPU at most 0.8x
	goalRSS = 0.6 // peak RSS at most 0.6x
)

// goalsLine says which goals jobkit's medians met against kcm's: time and writes
// no more, controller CPU at most goalCPU times, peak RSS at most goalRSS times.
func goalsLine(a, b summary) string {
	mark := func(ok bool) string {
		if ok {
			return "met"
		}
		return "not met"
	}
	return fmt.Sprintf("time %s, writes %s, CPU %s, RSS %s",
		mark(b.Duration <= a.Duration), mark(b.Writes <= a.Writes),
		mark(b.CPU <= goalCPU*a.CPU), mark(b.RSS <= goalRSS*a.RSS))
}

// writeScaleTable prints, for each case and limit, what issue 37 asks beside the main
// table: the p50 and p99 of the Jobs' times, etcd's CPU, the watch events and the
// controller's event-handler CPU per event (with --profile), and the goals.
func writeScaleTable(w io.Writer, order []string, sums map[string]map[string]summary) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| case | QPS/burst | Job time p50 / p99 s kcm | jobkit | etcd CPU s kcm / jobkit | watch events kcm / jobkit | handlers µs/event kcm / jobkit | informers + handlers µs/event kcm / jobkit | goals (jobkit vs kcm) |")
	fmt.Fprintln(w, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
	for _, k := range order {
		cs, q, _ := strings.Cut(k, " ")
		a, b := sums[k]["kcm"], sums[k]["jobkit"]
		handlers := func(s summary) float64 { return perEvent(s.CPUParts[handlerPart], s.Events) }
		both := func(s summary) float64 {
			return perEvent(s.CPUParts[handlerPart]+s.CPUParts[informerPart], s.Events)
		}
		prof := "- / -"
		all := "- / -"
		if a.CPUParts != nil || b.CPUParts != nil {
			prof = fmt.Sprintf("%.1f / %.1f", handlers(a), handlers(b))
			all = fmt.Sprintf("%.1f / %.1f", both(a), both(b))
		}
		fmt.Fprintf(w, "| %s | %s | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | %.0f / %.0f | %s | %s | %s |\n",
			cs, q, a.P50, a.P99, b.P50, b.P99, a.Etcd, b.Etcd, a.Events, b.Events, prof, all, goalsLine(a, b))
	}
}

// inParallel calls fn(0) ... fn(n-1), workers at a time, and returns the first
// error; after an error no further call starts.
func inParallel(n, workers int, fn func(i int) error) error {
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	next := make(chan int)
	for range min(workers, n) {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		mu.Lock()
		failed := firstErr != nil
		mu.Unlock()
		if failed {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return firstErr
}

// isAPIStatus tells an answer of the API server (a Status: refused, not found, ...)
// from a failure of the connection or the stream.
func isAPIStatus(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status)
}
