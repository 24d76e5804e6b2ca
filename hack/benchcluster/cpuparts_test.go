package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

func TestPartOf(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stack []string // leaf first, as in a profile
		want  string
	}{
		{"a write from a jobkit sync is a request",
			[]string{"syscall.Syscall", "k8s.io/client-go/rest.(*Request).Do", "github.com/jobkit/jobkit/reconcile.(*execution).createPod", "sync.(*WaitGroup).Go.func1"},
			"API requests (encode, send, decode the answer)"},
		{"a write from a kcm sync is a request",
			[]string{"k8s.io/client-go/rest.(*Request).request", "k8s.io/kubernetes/pkg/controller/job.(*Controller).manageJob.func1"},
			"API requests (encode, send, decode the answer)"},
		{"plan of a jobkit sync",
			[]string{"github.com/jobkit/jobkit/plan.Compute", "github.com/jobkit/jobkit/reconcile.(*execution).sync", "github.com/jobkit/jobkit/examples/clientgo.(*Controller).processJob"},
			"syncs"},
		{"a kcm sync",
			[]string{"k8s.io/kubernetes/pkg/controller/job.(*Controller).syncJob", "k8s.io/kubernetes/pkg/controller/job.(*Controller).processNextWorkItem"},
			"syncs"},
		{"watch decode",
			[]string{"k8s.io/api/core/v1.(*Pod).Unmarshal", "k8s.io/apimachinery/pkg/watch.(*StreamWatcher).receive"},
			"watch decode"},
		{"the HTTP/2 read loop",
			[]string{"crypto/tls.(*Conn).Read", "golang.org/x/net/http2.(*ClientConn).readLoop"},
			"HTTP/2 and TLS reads"},
		{"event correlation",
			[]string{"k8s.io/client-go/tools/record.(*EventCorrelator).EventCorrelate"},
			"events"},
		{"jobkit's pod handler",
			[]string{"github.com/jobkit/jobkit/examples/clientgo.(*Controller).onPod", "k8s.io/client-go/tools/cache.(*processorListener).run"},
			handlerPart},
		{"the Job controller's pod handler",
			[]string{"k8s.io/kubernetes/pkg/controller/job.(*Controller).updatePod", "k8s.io/kubernetes/pkg/controller/job.NewControllerWithClock.func2", "k8s.io/client-go/tools/cache.(*processorListener).run"},
			handlerPart},
		{"the informer's cache",
			[]string{"k8s.io/client-go/tools/cache.(*threadSafeMap).Update", "k8s.io/client-go/tools/cache.(*sharedIndexInformer).HandleDeltas"},
			informerPart},
		{"the GC worker", []string{"runtime.scanObject", "runtime.gcBgMarkWorker"}, "garbage collection"},
		{"the scheduler", []string{"runtime.futex", "runtime.findRunnable", "runtime.schedule"}, "Go scheduler, network poller"},
		{"a name only containing a part's function is not it",
			[]string{"example.com/x.notruntime.schedule"}, otherPart},
		{"no frame", nil, otherPart},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := partOf(tc.stack); got != tc.want {
				t.Errorf("partOf(%q) = %q, want %q", tc.stack, got, tc.want)
			}
		})
	}
}

// cpuProfile builds a gzipped CPU profile with one sample per stack, of the given
// nanoseconds.
func cpuProfile(t *testing.T, sampleType string, samples map[string]int64) []byte {
	t.Helper()
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: sampleType, Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10_000_000,
	}
	id := uint64(0)
	for fn, ns := range samples {
		id++
		f := &profile.Function{ID: id, Name: fn}
		loc := &profile.Location{ID: id, Line: []profile.Line{{Function: f}}}
		p.Function = append(p.Function, f)
		p.Location = append(p.Location, loc)
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{ns / 10_000_000, ns}})
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadCPUParts(t *testing.T) {
	dir := t.TempDir()
	chunks := []map[string]int64{
		{"runtime.gcBgMarkWorker": 300_000_000, "k8s.io/apimachinery/pkg/watch.(*StreamWatcher).receive": 200_000_000},
		{"runtime.gcBgMarkWorker": 100_000_000, "main.main": 50_000_000},
	}
	for i, c := range chunks {
		name := filepath.Join(dir, "000-x-jobkit-cpu-00"+string(rune('0'+i))+".pb.gz")
		if err := os.WriteFile(name, cpuProfile(t, "cpu", c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// kube-apiserver's chunks of the same run are not the controller's.
	if err := os.WriteFile(filepath.Join(dir, "000-x-jobkit-apiserver-cpu-000.pb.gz"), cpuProfile(t, "cpu", map[string]int64{"main.main": 9e9}), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readCPUParts(filepath.Join(dir, "000-x-jobkit-cpu-*.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"garbage collection": 0.4, "watch decode": 0.2, otherPart: 0.05}
	if len(got) != len(want) {
		t.Errorf("readCPUParts = %v, want %v", got, want)
	}
	for k, v := range want {
		if math.Abs(got[k]-v) > 1e-9 {
			t.Errorf("part %q = %v s, want %v", k, got[k], v)
		}
	}
	if _, err := readCPUParts(filepath.Join(dir, "nothing-*.pb.gz")); err == nil {
		t.Error("readCPUParts without a file: no error")
	}
	heap := filepath.Join(dir, "heap-cpu-000.pb.gz")
	if err := os.WriteFile(heap, cpuProfile(t, "alloc_space", map[string]int64{"main.main": 1}), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readCPUParts(heap); err == nil || !strings.Contains(err.Error(), "not a CPU profile") {
		t.Errorf("readCPUParts of a profile without cpu samples: %v, want not a CPU profile", err)
	}
	junk := filepath.Join(dir, "junk-cpu-000.pb.gz")
	if err := os.WriteFile(junk, []byte("not a profile"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readCPUParts(junk); err == nil {
		t.Error("readCPUParts of bytes that are no profile: no error")
	}
}

func TestWriteParts(t *testing.T) {
	var buf bytes.Buffer
	writeParts(&buf, "indexed-10", "500/1000", nil, nil)
	if buf.Len() != 0 {
		t.Errorf("writeParts without profiles printed %q", buf.String())
	}
	kcm := map[string]float64{"watch decode": 1, "syncs": 2, "garbage collection": 1}
	jobkit := map[string]float64{"watch decode": 0.5, "syncs": 1, "garbage collection": 1}
	writeParts(&buf, "indexed-10", "500/1000", kcm, jobkit)
	out := buf.String()
	for _, want := range []string{
		"CPU profile of indexed-10 at 500/1000",
		"| watch decode * | 1.00 | 0.50 | 0.50 |",
		"| syncs | 2.00 | 1.00 | 0.50 |",
		"| floor (*) | 2.00 | 1.50 | 0.75 |",
		"| total | 4.00 | 2.50 | 0.62 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("writeParts output has no %q:\n%s", want, out)
		}
	}
}
