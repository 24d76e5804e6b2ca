package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// managedByJobkit is the spec.managedBy of the Jobs that jobkit-clientgo takes (its
// --managed-by default).
const managedByJobkit = "jobkit.dev/job-controller"

// controller is one Job controller under test, as a command to start.
type controller struct {
	Name string // "kcm" or "jobkit"
	Bin  string
	// ManagedBy is the spec.managedBy of the Jobs it takes; empty for the Kubernetes
	// Job controller.
	ManagedBy string
	// ContentType, when set, is the controller's --kube-api-content-type (both
	// default to protobuf).
	ContentType string
	// Profile makes the controller serve Go's profiles (--profile): jobkit-clientgo
	// with --profiling on a metrics address of its own, kube-controller-manager on
	// its secure port with /debug/pprof/ allowed without authorization.
	Profile bool
	// Extra are more flags, appended as they are (--jobkit-args).
	Extra []string
}

// qps is a client rate limit: requests per second and burst.
type qps struct {
	QPS   float64
	Burst int
}

func (q qps) String() string {
	return strconv.FormatFloat(q.QPS, 'f', -1, 64) + "/" + strconv.Itoa(q.Burst)
}

// parseQPS reads "20/30" (QPS/burst).
func parseQPS(s string) (qps, error) {
	a, b, ok := strings.Cut(s, "/")
	q, err1 := strconv.ParseFloat(a, 64)
	burst, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || q <= 0 || burst < 1 {
		return qps{}, fmt.Errorf("qps %q: want QPS/burst, both positive, e.g. 20/30", s)
	}
	return qps{QPS: q, Burst: burst}, nil
}

// running is a started controller process.
type running struct {
	cmd  *exec.Cmd
	done chan error // receives the exit once; whoever takes it puts it back
	log  string
	port int // of its probes (kube-controller-manager: its secure port)
	// profile is the base URL of its /debug/pprof/ (Profile), empty without.
	profile string
	// metrics is the URL of its /metrics (both serve job_controller_job_syncs_total).
	metrics string
}

// args is the controller's command line: the same client limits and 5 workers for
// both (kube-controller-manager's --concurrent-job-syncs default, jobkit-clientgo's
// --workers default), no leader election, no listener off loopback.
// metricsPort is jobkit-clientgo's metrics (and with Profile, profiles) address;
// kube-controller-manager serves both on its secure port.
func (c controller) args(kubeconfig string, limits qps, probePort, metricsPort int) []string {
	q, b := strconv.FormatFloat(limits.QPS, 'f', -1, 64), strconv.Itoa(limits.Burst)
	if c.ManagedBy == "" {
		args := []string{"--kubeconfig", kubeconfig, "--controllers", "job", "--leader-elect=false",
			"--kube-api-qps", q, "--kube-api-burst", b, "--concurrent-job-syncs", "5",
			"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(probePort)}
		if c.ContentType != "" {
			args = append(args, "--kube-api-content-type", c.ContentType)
		}
		// Without an authorization kubeconfig every path but these is refused;
		// --profiling is on by default.
		allow := "/healthz,/readyz,/livez,/metrics"
		if c.Profile {
			allow += ",/debug/pprof/*"
		}
		return append(args, "--authorization-always-allow-paths", allow)
	}
	args := []string{"--kubeconfig", kubeconfig, "--kube-api-qps", q, "--kube-api-burst", b, "--workers", "5",
		"--metrics-bind-address", "127.0.0.1:" + strconv.Itoa(metricsPort),
		"--health-probe-bind-address", "127.0.0.1:" + strconv.Itoa(probePort)}
	if c.Profile {
		args = append(args, "--profiling")
	}
	if c.ContentType != "" {
		args = append(args, "--kube-api-content-type", c.ContentType)
	}
	return append(args, c.Extra...)
}

// launch starts the controller with its output in logDir/NAME-RUN.log, without
// waiting for it.
func (c controller) launch(kubeconfig, logDir, run string, limits qps) (*running, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	metricsPort := 0
	if c.ManagedBy != "" {
		if metricsPort, err = freePort(); err != nil {
			return nil, err
		}
	}
	logPath := fmt.Sprintf("%s/%s-%s.log", logDir, c.Name, run)
	out, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd := exec.Command(c.Bin, c.args(kubeconfig, limits, port, metricsPort)...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", c.Name, err)
	}
	r := &running{cmd: cmd, done: make(chan error, 1), log: logPath, port: port}
	base := "http://127.0.0.1:" + strconv.Itoa(metricsPort)
	if c.ManagedBy == "" {
		base = "https://127.0.0.1:" + strconv.Itoa(port)
	}
	r.metrics = base + "/metrics"
	if c.Profile {
		r.profile = base
	}
	go func() { r.done <- cmd.Wait() }()
	return r, nil
}

// start runs the controller (launch) and waits until it is ready:
// jobkit-clientgo's /readyz (caches synced), kube-controller-manager's log line that
// the Job controller's caches have synced.
func (c controller) start(ctx context.Context, kubeconfig, logDir, run string, limits qps) (*running, error) {
	r, err := c.launch(kubeconfig, logDir, run, limits)
	if err != nil {
		return nil, err
	}
	if err := c.waitReady(ctx, r); err != nil {
		r.stop()
		return nil, err
	}
	return r, nil
}

// waitReady waits up to 60 s for the launched controller r to be ready.
func (c controller) waitReady(ctx context.Context, r *running) error {
	port, logPath := r.port, r.log
	deadline := time.Now().Add(60 * time.Second)
	for {
		ready, err := c.ready(port, logPath)
		if ready {
			return nil
		}
		select {
		case werr := <-r.done:
			r.done <- werr // for stop and kill
			return fmt.Errorf("%s exited before it was ready (%v): see %s", c.Name, werr, logPath)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after 60 s (%v): see %s", c.Name, err, logPath)
		}
	}
}

func (c controller) ready(port int, logPath string) (bool, error) {
	if c.ManagedBy == "" {
		b, err := os.ReadFile(logPath)
		if err != nil {
			return false, err
		}
		// With --controllers=job the first "Caches are synced" after "Starting job
		// controller" is the Job controller's (klog names no controller on that line).
		_, after, started := strings.Cut(string(b), "Starting job controller")
		if started && strings.Contains(after, "Caches are synced") {
			return true, nil
		}
		return false, errors.New("no log line that the Job controller's caches are synced")
	}
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/readyz")
	if err != nil {
		return false, err
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK, fmt.Errorf("/readyz: %s", resp.Status)
}

// syncMetric is the counter of Job syncs both controllers export (the Kubernetes Job
// controller's name, which jobkit-clientgo keeps).
const syncMetric = "job_controller_job_syncs_total"

// syncs scrapes the controller's /metrics and returns its Job syncs so far, over all
// completion modes, results and actions.
func (r *running) syncs(ctx context.Context) (float64, error) {
	client := &http.Client{
		Timeout: 10 * time.Second,
		// kube-controller-manager serves its own self-signed certificate on loopback.
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.metrics, nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("scrape %s: %w", r.metrics, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("scrape %s: %s", r.metrics, resp.Status)
	}
	n, found, err := parseCounter(resp.Body, syncMetric)
	if err == nil && !found {
		err = fmt.Errorf("scrape %s: no %s", r.metrics, syncMetric)
	}
	return n, err
}

// pid is the process id of the running controller.
func (r *running) pid() int { return r.cmd.Process.Pid }

// kill sends SIGKILL and waits for the process to end.
func (r *running) kill() {
	_ = r.cmd.Process.Kill()
	err := <-r.done
	r.done <- err
}

// exited tells whether the process has ended, without waiting.
func (r *running) exited() bool {
	select {
	case err := <-r.done:
		r.done <- err
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, then SIGKILL after 10 s, and waits for the process.
func (r *running) stop() error {
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-r.done:
		r.done <- err
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return nil // ended by the signal
		}
		return err
	case <-time.After(10 * time.Second):
		r.kill()
		return fmt.Errorf("ignored SIGTERM for 10 s, killed: see %s", r.log)
	}
}

// freePort is a loopback TCP port nobody listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
