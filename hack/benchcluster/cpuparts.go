package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/google/pprof/profile"
)

// cpuPart is one share of a controller's CPU profile: the samples whose stack holds
// a frame that one of Frames matches (function names, in full). The parts are tried
// in the order of cpuParts, and a sample goes to the first that matches.
type cpuPart struct {
	Name   string
	Frames []*regexp.Regexp
	// Floor marks the work any client-go controller does for the same watch events,
	// whatever it decides: reading and decoding them, the informer's cache and
	// handlers, the collection of the garbage that leaves, the Go scheduler.
	Floor bool
}

// cpuParts are the parts, in the order they are tried. A write sent from a sync is
// a request (its goroutine runs the sync's code too, but the request is the most of
// it); the syncs are the workers of both controllers and what they start.
var cpuParts = []cpuPart{
	{Name: "API requests (encode, send, decode the answer)", Frames: frames(
		`^k8s\.io/client-go/rest\.\(\*Request\)\.(Do|request|Stream)$`)},
	{Name: "watch decode", Floor: true, Frames: frames(
		`^k8s\.io/apimachinery/pkg/watch\.\(\*StreamWatcher\)\.receive$`)},
	{Name: "HTTP/2 and TLS reads", Floor: true, Frames: frames(
		`^golang\.org/x/net/http2\.\(\*ClientConn\)\.readLoop$`)},
	{Name: "events", Frames: frames(
		`^k8s\.io/client-go/tools/record\.`, `^k8s\.io/apimachinery/pkg/watch\.\(\*Broadcaster\)\.`)},
	{Name: "syncs", Frames: frames(
		`^k8s\.io/kubernetes/pkg/controller/job\.\(\*Controller\)\.(processNextWorkItem|processNextOrphanPod|manageJob|removeTrackingFinalizerFromPods)`,
		`^github\.com/jobkit/jobkit/examples/clientgo\.\(\*Controller\)\.(processJob|processOrphan)$`,
		`^github\.com/jobkit/jobkit/reconcile\.\(\*execution\)\.`)},
	{Name: handlerPart, Frames: frames(
		`^k8s\.io/kubernetes/pkg/controller/job\.\(\*Controller\)\.(addPod|updatePod|deletePod|addJob|updateJob|deleteJob)$`,
		`^github\.com/jobkit/jobkit/examples/clientgo\.\(\*Controller\)\.(onPod|onJob)$`)},
	{Name: informerPart, Floor: true, Frames: frames(
		`^k8s\.io/client-go/tools/cache\.`)},
	{Name: "garbage collection", Floor: true, Frames: frames(
		`^runtime\.(gcBgMarkWorker|bgsweep|bgscavenge)$`)},
	{Name: "Go scheduler, network poller", Floor: true, Frames: frames(
		`^runtime\.(schedule|findRunnable|mcall|park_m|netpoll|sysmon)$`)},
}

// The parts of the informers: the controllers' own event handlers (what they decide
// for each watch event: expectations, which Jobs to queue) and the rest of client-go's
// informer (the delta FIFO, the cache and its indexes, handing events to handlers),
// which any client-go controller spends on the same events.
const (
	handlerPart  = "event handlers (the controller's own)"
	informerPart = "informers (cache, dispatch)"
)

// otherPart collects the samples no part matched.
const otherPart = "other"

func frames(exprs ...string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(exprs))
	for i, e := range exprs {
		out[i] = regexp.MustCompile(e)
	}
	return out
}

// partOf is the name of the part a stack of function names belongs to.
func partOf(stack []string) string {
	for _, p := range cpuParts {
		for _, fn := range stack {
			for _, re := range p.Frames {
				if re.MatchString(fn) {
					return p.Name
				}
			}
		}
	}
	return otherPart
}

// readCPUParts reads the CPU profiles of one run (the chunks matching glob) and sums
// their samples by part, in seconds.
func readCPUParts(glob string) (map[string]float64, error) {
	files, err := filepath.Glob(glob)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no CPU profile %s", glob)
	}
	out := map[string]float64{}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		err = addCPUParts(out, f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return out, nil
}

// addCPUParts adds the samples of the CPU profile r (gzipped or not) to parts.
func addCPUParts(parts map[string]float64, r io.Reader) error {
	p, err := profile.Parse(r)
	if err != nil {
		return err
	}
	value := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			value = i
		}
	}
	if value < 0 {
		return fmt.Errorf("not a CPU profile: no sample type cpu/nanoseconds in %v", p.SampleType)
	}
	var stack []string
	for _, s := range p.Sample {
		stack = stack[:0]
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if line.Function != nil {
					stack = append(stack, line.Function.Name)
				}
			}
		}
		parts[partOf(stack)] += float64(s.Value[value]) / 1e9
	}
	return nil
}

// partNames are the parts in the order of the table, other last.
func partNames() []string {
	names := make([]string, 0, len(cpuParts)+1)
	for _, p := range cpuParts {
		names = append(names, p.Name)
	}
	return append(names, otherPart)
}

// isFloor tells whether the part of that name is floor work (cpuPart.Floor).
func isFloor(name string) bool {
	for _, p := range cpuParts {
		if p.Name == name {
			return p.Floor
		}
	}
	return false
}

// partsLine is the one-line report of a run's CPU by part.
func partsLine(parts map[string]float64) string {
	var total float64
	for _, v := range parts {
		total += v
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  CPU in the profile %.2fs:", total)
	for _, name := range partNames() {
		if v := parts[name]; v > 0 {
			fmt.Fprintf(&b, " %s %.2fs;", name, v)
		}
	}
	return strings.TrimSuffix(b.String(), ";")
}
