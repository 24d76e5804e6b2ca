package controllerruntime_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"

	"github.com/go-logr/logr"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/jobkit/jobkit/controllerruntime/testenv"
)

// restConfig is the API server of the package's integration tests, started once by
// TestMain (about 5 seconds).
var restConfig *rest.Config

func TestMain(m *testing.M) {
	// The managers of the tests log nowhere; informers started by controller-runtime
	// log to its global logger, which must be set once.
	crlog.SetLogger(logr.FromSlogHandler(slog.DiscardHandler))
	env, cfg, err := testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration environment:", err)
		os.Exit(1)
	}
	restConfig = cfg
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the integration environment:", err)
	}
	os.Exit(code)
}

// directClient returns a client that reads from and writes to the API server, with
// no cache.
func directClient(t *testing.T) client.Client {
	t.Helper()
	c, err := client.New(restConfig, client.Options{})
	if err != nil {
		t.Fatalf("client.New: %v", err)
	}
	return c
}

// namespace creates a namespace for one test, named prefix-<random>.
func namespace(t *testing.T, c client.Client, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating a namespace %s-*: %v", prefix, err)
	}
	return ns.Name
}
