package envtesting_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/jobkit/jobkit/examples/internal/envtesting"
)

// One API server for the package's tests that need one.
var env *envtesting.Env

func TestMain(m *testing.M) {
	os.Exit(envtesting.Main(m, envtesting.Options{QPS: 500, Burst: 1000}, func(e *envtesting.Env) error {
		env = e
		return nil
	}))
}

func TestStartBuildsTheClients(t *testing.T) {
	assert.Equal(t, float32(500), env.Config.QPS)
	assert.Equal(t, 1000, env.Config.Burst)
	ns, err := envtesting.CreateNamespace(t.Context(), env.Client, "envtesting-")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(ns, "envtesting-") && len(ns) > len("envtesting-"), "namespace %q, want envtesting- and a suffix", ns)
	// The clientset sees what the client wrote.
	_, err = env.Clientset.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{})
	assert.NoError(t, err)
}

func TestStartRefusesABadScheme(t *testing.T) {
	bad := func(*runtime.Scheme) error { return os.ErrInvalid }
	_, err := envtesting.Start(envtesting.Options{AddToScheme: bad})
	require.ErrorIs(t, err, os.ErrInvalid)
	assert.ErrorContains(t, err, "building the scheme")
}

func TestUserWithRole(t *testing.T) {
	cfg, err := env.UserWithRole(filepath.Join("testdata", "role.yaml"), "envtesting-reader")
	require.NoError(t, err)
	assert.Equal(t, env.Config.QPS, cfg.QPS, "the user's QPS")
	user, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	require.NoError(t, err)
	assert.NoError(t, user.List(t.Context(), &corev1.ConfigMapList{}, client.InNamespace("default")), "listing what the role grants")
	err = user.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x"}})
	assert.True(t, apierrors.IsForbidden(err), "creating what the role does not grant: error = %v, want Forbidden", err)

	_, err = env.UserWithRole(filepath.Join("testdata", "missing.yaml"), "nobody")
	assert.ErrorContains(t, err, "reading the role")
}

func TestManager(t *testing.T) {
	var setupCalled atomic.Bool
	stop := envtesting.Manager{
		Name:    "the test controller",
		Config:  env.Config,
		Options: manager.Options{Scheme: env.Scheme},
		Setup: func(mgr manager.Manager) error {
			setupCalled.Store(true)
			// An informer the manager's cache must sync before Start returns.
			_, err := mgr.GetCache().GetInformer(context.Background(), &corev1.ConfigMap{})
			return err
		},
	}.Start(t)
	assert.True(t, setupCalled.Load(), "Setup was not called")
	stop()
	stop() // a second call does nothing
}

func TestReadYAML(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	unknown := filepath.Join(dir, "unknown.yaml")
	require.NoError(t, os.WriteFile(good, []byte("metadata:\n  name: a\n"), 0o600))
	require.NoError(t, os.WriteFile(unknown, []byte("metadata:\n  name: a\nextra: 1\n"), 0o600))
	tests := []struct {
		name     string
		path     string
		wantErr  string
		wantName string
	}{
		{name: "decodes", path: good, wantName: "a"},
		{name: "refuses an unknown field", path: unknown, wantErr: `decoding ` + unknown + `: error unmarshaling JSON: while decoding JSON: json: unknown field "extra"`},
		{name: "missing file", path: filepath.Join(dir, "none.yaml"), wantErr: "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cm corev1.ConfigMap
			err := envtesting.ReadYAML(tt.path, &cm)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantName, cm.Name)
		})
	}
}
