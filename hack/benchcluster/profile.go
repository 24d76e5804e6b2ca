package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// profileChunk is the length of one CPU profile taken during a run (--profile): the
// run's profile is the set of its chunks, which `go tool pprof` merges when given
// them all; a run waits for its last chunk to end, so at most this much is added.
const profileChunk = 5 * time.Second

// profiler takes Go CPU profiles of a running controller, one chunk after another,
// through its /debug/pprof endpoint, and a heap profile at the end.
type profiler struct {
	base   string // e.g. http://127.0.0.1:PORT or https://127.0.0.1:PORT
	prefix string // DIR/RUN-CONTROLLER
	client *http.Client
	stop   context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	err    error
	chunks int
}

// startProfiler begins taking CPU profiles of the controller at base into files
// named prefix-cpu-NNN.pb.gz. client is nil for a controller's endpoint (any
// certificate is taken: kube-controller-manager serves its own self-signed one on
// loopback), or kube-apiserver's authenticated client for its own profiles.
func startProfiler(base, prefix string, client *http.Client) *profiler {
	ctx, cancel := context.WithCancel(context.Background())
	if client == nil {
		client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	}
	p := &profiler{base: base, prefix: prefix, stop: cancel, client: client}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for ctx.Err() == nil {
			// A chunk runs to its end even when the run is over, so no CPU is lost.
			name := fmt.Sprintf("%s-cpu-%03d.pb.gz", p.prefix, p.chunks)
			if err := p.fetch("/debug/pprof/profile?seconds="+strconv.Itoa(int(profileChunk/time.Second)), name); err != nil {
				p.fail(err)
				return
			}
			p.chunks++
		}
	}()
	return p
}

func (p *profiler) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
}

// fetch writes the answer of path to the file name.
func (p *profiler) fetch(path, name string) error {
	resp, err := p.client.Get(p.base + path)
	if err != nil {
		return fmt.Errorf("profile %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("profile %s: %s: %s", path, resp.Status, b)
	}
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("profile %s: %w", path, err)
	}
	return f.Close()
}

// finish waits for the CPU chunk in progress, takes the heap profile and reports
// the files written (a glob for the chunks) or the first error.
func (p *profiler) finish() (string, error) {
	p.stop()
	p.wg.Wait()
	if p.err != nil {
		return "", p.err
	}
	if err := p.fetch("/debug/pprof/heap", p.prefix+"-heap.pb.gz"); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d CPU chunks %s-cpu-*.pb.gz, heap %s-heap.pb.gz", p.chunks, filepath.Base(p.prefix), filepath.Base(p.prefix)), nil
}
