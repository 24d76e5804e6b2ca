package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// groupProc is one process of a group side other than the two Job controllers that
// controller (controllers.go) starts: JobSet's controller, jobkit's JobSet
// controller, the TrainingJob controller, the garbage collector.
type groupProc struct {
	Name string
	Bin  string
	// Args builds the command line from the kubeconfig, the client limits, a free
	// loopback port for the probes and a directory of the run's own files.
	Args func(kubeconfig string, limits qps, probePort int, dir string) ([]string, error)
	// ReadyURL is the path of the probe that says ready (e.g. /readyz) on the probe
	// port; empty: ReadyLog.
	ReadyURL string
	// ReadyLog is a line the log shows once the process is ready.
	ReadyLog string
}

// start launches p with its output in logDir/NAME-RUN.log and waits up to 90 s for it
// to be ready.
func (p groupProc) start(ctx context.Context, kubeconfig, logDir, run string, limits qps) (*running, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(logDir, p.Name+"-"+run)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	args, err := p.Args(kubeconfig, limits, port, dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Name, err)
	}
	logPath := filepath.Join(logDir, p.Name+"-"+run+".log")
	out, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd := exec.Command(p.Bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", p.Name, err)
	}
	r := &running{cmd: cmd, done: make(chan error, 1), log: logPath, port: port}
	go func() { r.done <- cmd.Wait() }()
	deadline := time.Now().Add(90 * time.Second)
	for {
		if p.ready(port, logPath) {
			return r, nil
		}
		select {
		case werr := <-r.done:
			r.done <- werr
			return nil, fmt.Errorf("%s exited before it was ready (%v): see %s", p.Name, werr, logPath)
		case <-ctx.Done():
			r.stop()
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			r.stop()
			return nil, fmt.Errorf("%s not ready after 90 s: see %s", p.Name, logPath)
		}
	}
}

func (p groupProc) ready(port int, logPath string) bool {
	if p.ReadyURL == "" {
		b, err := os.ReadFile(logPath)
		return err == nil && strings.Contains(string(b), p.ReadyLog)
	}
	client := &http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get("http://127.0.0.1:" + strconv.Itoa(port) + p.ReadyURL)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// limitArgs are the client limits as the controllers built on controller-runtime and
// the examples' commands take them.
func limitArgs(limits qps) []string {
	return []string{"--kube-api-qps", strconv.FormatFloat(limits.QPS, 'f', -1, 64), "--kube-api-burst", strconv.Itoa(limits.Burst)}
}

// jobsetProc is JobSet's controller (the main of sigs.k8s.io/jobset). Its
// configuration file turns off internalCertManagement (cert-controller would write a
// Secret and patch the webhook configurations of a Deployment that does not exist),
// serves its webhooks on 127.0.0.1 with a self-signed certificate written to the run's
// directory (the manager does not start without one, and /readyz waits for the webhook
// server), and turns its metrics server off. No webhook configuration is registered
// with kube-apiserver: the benchmark writes its JobSets with every field JobSet's
// defaulting webhook would set (groupcases.go), so that both controllers see the
// same objects.
func jobsetProc(bin string) groupProc {
	return groupProc{Name: "jobset", Bin: bin, ReadyURL: "/readyz",
		Args: func(kubeconfig string, limits qps, probePort int, dir string) ([]string, error) {
			certDir := filepath.Join(dir, "certs")
			if err := selfSignedCert(certDir); err != nil {
				return nil, err
			}
			webhookPort, err := freePort()
			if err != nil {
				return nil, err
			}
			config := fmt.Sprintf(`apiVersion: config.jobset.x-k8s.io/v1alpha1
kind: Configuration
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %s
metrics:
  bindAddress: "0"
health:
  healthProbeBindAddress: 127.0.0.1:%d
clientConnection:
  qps: %v
  burst: %d
`, webhookPort, certDir, probePort, limits.QPS, limits.Burst)
			path := filepath.Join(dir, "config.yaml")
			if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
				return nil, err
			}
			return append([]string{"--config", path, "--kubeconfig", kubeconfig, "--zap-log-level", "info"}, limitArgs(limits)...), nil
		}}
}

// jobkitJobSetProc is the example's JobSet controller serving JobSet's own API
// (examples/jobset/upstream/cmd/jobset-controller --api jobset.x-k8s.io), its child
// Jobs handed to jobkit-clientgo through their spec.managedBy.
func jobkitJobSetProc(bin string) groupProc {
	return groupProc{Name: "jobkit-jobset", Bin: bin, ReadyURL: "/readyz",
		Args: func(kubeconfig string, limits qps, probePort int, _ string) ([]string, error) {
			return append([]string{"--api", "jobset.x-k8s.io", "--child-managed-by", managedByJobkit,
				"--kubeconfig", kubeconfig, "--workers", "5", "--metrics-bind-address", "0",
				"--health-probe-bind-address", "127.0.0.1:" + strconv.Itoa(probePort)}, limitArgs(limits)...), nil
		}}
}

// trainingJobProc is the TrainingJob controller (examples/trainingjob): one owner of
// the roles' pods, no child Jobs.
func trainingJobProc(bin string) groupProc {
	return groupProc{Name: "trainingjob", Bin: bin, ReadyURL: "/readyz",
		Args: func(kubeconfig string, limits qps, probePort int, _ string) ([]string, error) {
			return append([]string{"--kubeconfig", kubeconfig, "--workers", "5", "--metrics-bind-address", "0",
				"--health-probe-bind-address", "127.0.0.1:" + strconv.Itoa(probePort)}, limitArgs(limits)...), nil
		}}
}

// gcProc is kube-controller-manager's garbage collector alone: JobSet and jobkit
// both delete the child Jobs of an old attempt with foreground propagation, which
// only the garbage collector finishes (it deletes the pods, then the Job). It runs
// under every side and is measured apart from the controllers.
func gcProc(kcm string) groupProc {
	return groupProc{Name: "gc", Bin: kcm, ReadyLog: "Proceeding to collect garbage",
		Args: func(kubeconfig string, limits qps, probePort int, _ string) ([]string, error) {
			return append([]string{"--kubeconfig", kubeconfig, "--controllers", "garbagecollector", "--leader-elect=false",
				"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(probePort),
				"--authorization-always-allow-paths", "/healthz,/readyz,/livez,/metrics"}, limitArgs(limits)...), nil
		}}
}

// selfSignedCert writes tls.crt and tls.key, a certificate for 127.0.0.1 and
// localhost valid for a day, to dir.
func selfSignedCert(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "benchcluster-webhook"},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
}
