package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// requestKey is one series of apiserver_request_total, reduced to what the table
// tells apart.
type requestKey struct {
	Verb, Resource, Subresource string
}

func (k requestKey) String() string {
	if k.Subresource != "" {
		return k.Verb + " " + k.Resource + "/" + k.Subresource
	}
	return k.Verb + " " + k.Resource
}

// requests counts API requests by requestKey.
type requests map[requestKey]float64

// parseRequests reads kube-apiserver's /metrics (Prometheus text format) and sums
// apiserver_request_total over the labels that requestKey leaves out (code, group,
// version, scope, ...).
func parseRequests(r io.Reader) (requests, error) {
	out := requests{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	const name = "apiserver_request_total{"
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		if end < 0 {
			return nil, fmt.Errorf("apiserver_request_total: no closing brace in %q", line)
		}
		labels, err := parseLabels(line[len(name):end])
		if err != nil {
			return nil, fmt.Errorf("apiserver_request_total: %w in %q", err, line)
		}
		fields := strings.Fields(line[end+1:])
		if len(fields) == 0 {
			return nil, fmt.Errorf("apiserver_request_total: no value in %q", line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("apiserver_request_total: value %q: %w", fields[0], err)
		}
		out[requestKey{Verb: labels["verb"], Resource: labels["resource"], Subresource: labels["subresource"]}] += v
	}
	return out, sc.Err()
}

// parseCounter reads a Prometheus text exposition and sums the series of the metric
// name over all their labels; found is false when no series of it is there.
func parseCounter(r io.Reader, name string) (sum float64, found bool, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || (rest[0] != '{' && rest[0] != ' ') {
			continue // another metric, or one whose name only starts with name
		}
		if rest[0] == '{' {
			end := strings.LastIndexByte(rest, '}')
			if end < 0 {
				return 0, false, fmt.Errorf("%s: no closing brace in %q", name, line)
			}
			rest = rest[end+1:]
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return 0, false, fmt.Errorf("%s: no value in %q", name, line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return 0, false, fmt.Errorf("%s: value %q: %w", name, fields[0], err)
		}
		sum, found = sum+v, true
	}
	return sum, found, sc.Err()
}

// parseLabels reads `a="x",b="y"` with the escapes of the text format (\\, \", \n).
func parseLabels(s string) (map[string]string, error) {
	labels := map[string]string{}
	for len(s) > 0 {
		eq := strings.IndexByte(s, '=')
		if eq < 0 || eq+1 >= len(s) || s[eq+1] != '"' {
			return nil, fmt.Errorf("label %q: want name=\"value\"", s)
		}
		key := strings.TrimSpace(s[:eq])
		var val strings.Builder
		i := eq + 2
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				if s[i] == 'n' {
					val.WriteByte('\n')
					continue
				}
			}
			val.WriteByte(s[i])
		}
		if i >= len(s) {
			return nil, fmt.Errorf("label %q: unterminated value", key)
		}
		labels[key] = val.String()
		s = strings.TrimPrefix(s[i+1:], ",")
	}
	return labels, nil
}

// sub is r minus before, series by series, without the zero differences.
func (r requests) sub(before requests) requests {
	out := requests{}
	for k, v := range r {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// notController tells the requests that the controller under test does not make.
// A Job controller reads and writes pods, Jobs and events only; the rest is kwok's
// (it plays the kubelets: pod status, nodes, leases), kube-apiserver's own (its
// informers re-opening watches of every kind, /openapi/v3) and the benchmark's (its
// Job creates and watch, the /metrics scrape).
func notController(k requestKey) bool {
	switch k.Resource {
	case "pods":
		return k.Subresource == "status"
	case "jobs":
		return k.Subresource == "" && (k.Verb == "POST" || k.Verb == "WATCH")
	case "events":
		return false
	}
	return true
}

// isWrite tells the verbs that change objects.
func isWrite(verb string) bool {
	switch verb {
	case "POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "APPLY":
		return true
	}
	return false
}

// clockTicks is the unit of /proc/PID/stat's times (USER_HZ, 100 on Linux).
const clockTicks = 100

// cpuSeconds is the user plus system CPU time of process pid so far.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(b))
}

// parseStatCPU reads utime and stime (fields 14 and 15) of a /proc/PID/stat line. The
// command name (field 2) may hold spaces and parentheses, so fields are counted from
// its closing parenthesis.
func parseStatCPU(stat string) (float64, error) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("/proc stat %q: no command name", stat)
	}
	f := strings.Fields(stat[end+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat %q: %d fields after the command name, want at least 13", stat, len(f))
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc stat: utime %q, stime %q: want integers", f[11], f[12])
	}
	return float64(utime+stime) / clockTicks, nil
}

// peakRSS is the peak resident set size of process pid in bytes (VmHWM).
func peakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return parseStatusHWM(string(b))
}

// parseStatusHWM reads the VmHWM line ("VmHWM:   123456 kB") of /proc/PID/status.
func parseStatusHWM(status string) (int64, error) {
	for line := range strings.Lines(status) {
		rest, ok := strings.CutPrefix(line, "VmHWM:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("/proc status: VmHWM %q: want \"N kB\"", strings.TrimSpace(rest))
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc status: VmHWM %q: %w", f[0], err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("/proc status: no VmHWM line")
}

// Settling: before each run the control plane must be idle, or the run pays for the
// previous one (kube-apiserver and kwok still handling the deletion of its pods).
const (
	settleIdle    = 0.2 // CPU seconds per second of etcd, kube-apiserver and kwok together
	settleSamples = 3   // consecutive idle seconds
	settleMax     = 2 * time.Minute
)

// settle waits until the processes of b.others together use less than settleIdle
// CPU seconds per second for settleSamples seconds in a row, at most settleMax, and
// returns how long it waited and whether they settled.
func (b *bench) settle(ctx context.Context) (time.Duration, bool, error) {
	start := time.Now()
	total := func() (float64, error) {
		sum := 0.0
		for name, pid := range b.others {
			v, err := cpuSeconds(pid)
			if err != nil {
				return 0, fmt.Errorf("%s: %w", name, err)
			}
			sum += v
		}
		return sum, nil
	}
	last, err := total()
	if err != nil {
		return 0, false, err
	}
	idle := 0
	for time.Since(start) < settleMax {
		select {
		case <-ctx.Done():
			return time.Since(start), false, ctx.Err()
		case <-time.After(time.Second):
		}
		cur, err := total()
		if err != nil {
			return time.Since(start), false, err
		}
		if cur-last < settleIdle {
			idle++
		} else {
			idle = 0
		}
		last = cur
		if idle >= settleSamples {
			return time.Since(start), true, nil
		}
	}
	return time.Since(start), false, nil
}
