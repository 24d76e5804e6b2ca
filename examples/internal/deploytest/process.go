package deploytest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/jobkit/jobkit/examples/internal/cmdtest"
)

// argsEnv carries the command's args (JSON) from CheckRBAC to RunCommand.
const argsEnv = "JOBKIT_DEPLOYTEST_ARGS"

// RunCommand is the body of a Controller's Helper test: in a process started by
// CheckRBAC it runs run with the args CheckRBAC gave until SIGTERM, failing the
// test when run returns an error; in any other test run it skips.
func RunCommand(t *testing.T, run func(ctx context.Context, args []string) error) {
	raw := os.Getenv(argsEnv)
	if raw == "" {
		t.Skip("runs only as the command process of deploytest.CheckRBAC")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		t.Fatalf("$%s: %v", argsEnv, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, args); err != nil {
		t.Fatalf("the command returned: %v", err)
	}
}

// runAs starts the command as sa until the test ends, in a process of its own
// (c.Helper), with the Deployment's args, a kubeconfig that impersonates sa and
// the workloads of namespace ns whose managedBy is managedBy (c.Args), and
// returns its log and the address of its /metrics; extra are further args. At the
// end it is sent SIGTERM and must exit 0 unless it was refused something.
func runAs(t *testing.T, admin *rest.Config, c Controller, sa account, ns, managedBy string, extra ...string) (*logs, string) {
	t.Helper()
	container := c.Base.Deployment.Spec.Template.Spec.Containers[0]
	metricsAddr := cmdtest.FreeAddr(t)
	args := append(Args(&container, sa.namespace),
		"--kubeconfig="+kubeconfigAs(t, admin, sa),
		// Outside a cluster there is no pod namespace to default to.
		"--leader-elect-namespace="+sa.namespace,
		"--metrics-bind-address="+metricsAddr,
		"--health-probe-bind-address="+cmdtest.FreeAddr(t))
	if c.Args != nil {
		args = append(args, c.Args(ns, managedBy)...)
	} else {
		args = append(args, "--managed-by="+managedBy)
	}
	args = append(args, extra...)
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	l := &logs{}
	cmd := exec.Command(os.Args[0], "-test.run=^"+c.Helper+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), argsEnv+"="+string(raw))
	cmd.Stdout, cmd.Stderr = l, l
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil && len(l.matching("forbidden")) == 0 {
				t.Errorf("the command exited with %v after SIGTERM, want 0; its log:\n%s", err, strings.Join(l.matching(""), "\n"))
			}
		case <-time.After(Timeout):
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("the command did not stop within %v of SIGTERM", Timeout)
		}
	})
	return l, metricsAddr
}

// kubeconfigAs writes a kubeconfig with admin's credentials that impersonates sa
// with the groups the API server gives a service account's token.
func kubeconfigAs(t *testing.T, admin *rest.Config, sa account) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthorityData: admin.CAData}
	kc.AuthInfos["sa"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: admin.CertData, ClientKeyData: admin.KeyData, Token: admin.BearerToken,
		Impersonate:       sa.user(),
		ImpersonateGroups: []string{"system:serviceaccounts", "system:serviceaccounts:" + sa.namespace, "system:authenticated"},
	}
	kc.Contexts["sa"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "sa"}
	kc.CurrentContext = "sa"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// logs keeps the lines a command process writes, lower-cased, with the quotes
// that its logger escapes unescaped (the API server's messages quote names).
type logs struct {
	mu      sync.Mutex
	partial []byte
	lines   []string
}

// Write implements io.Writer for the process's output.
func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := strings.ReplaceAll(string(l.partial[:i]), `\"`, `"`)
		l.lines = append(l.lines, strings.ToLower(line))
		l.partial = l.partial[i+1:]
	}
}

// matching returns the lines that contain s (lower case).
func (l *logs) matching(s string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}
