package reconcile_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

func TestNewConfig(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{})
	tests := []struct {
		name       string
		cfg        reconcile.Config
		wantFields []string // fields named in the error; none means valid
	}{
		{name: "name only", cfg: reconcile.Config{Name: "example.com/jobs"}},
		{name: "upstream name", cfg: reconcile.Config{Name: "kubernetes.io/job-controller"}},
		{name: "empty name", cfg: reconcile.Config{}, wantFields: []string{"Name"}},
		{name: "name too long", cfg: reconcile.Config{Name: strings.Repeat("x", 64)}, wantFields: []string{"Name"}},
		{name: "negative values", cfg: reconcile.Config{
			Name: "x", PodEventBatchPeriod: -1, ExpectationsTTL: -1, MaxCreatesPerSync: -1, MaxDeletesPerSync: -2,
			MaxUncounted: -3, FinalizerRemovalParallelism: -1, StaleCacheRequeue: -1, Backoff: plainbackoff.Policy{Base: -1, Max: -1},
		}, wantFields: []string{"PodEventBatchPeriod", "ExpectationsTTL", "MaxCreatesPerSync", "MaxDeletesPerSync", "MaxUncounted",
			"FinalizerRemovalParallelism", "StaleCacheRequeue", "Backoff.Base", "Backoff.Max"}},
		{name: "parallelism too high", cfg: reconcile.Config{Name: "x", FinalizerRemovalParallelism: 501}, wantFields: []string{"FinalizerRemovalParallelism"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := reconcile.New(tc.cfg, c, reconcile.JobStatusWriter(c))
			if len(tc.wantFields) == 0 {
				require.NoError(t, err)
				require.NotNil(t, r)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, reconcile.ErrInvalidConfig)
			for _, f := range tc.wantFields {
				assert.Contains(t, err.Error(), f+":", "New() error = %v, want it to name %s", err, f)
			}
		})
	}
	_, err := reconcile.New(reconcile.Config{Name: "x"}, nil, nil)
	assert.True(t, errors.Is(err, reconcile.ErrInvalidArgument), "New(nil client) error = %v", err)
}

func TestConfigDefaults(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{})
	r, err := reconcile.New(reconcile.Config{Name: "x"}, c, c)
	require.NoError(t, err)
	cfg := r.Config()
	assert.Equal(t, "x", cfg.Name)
	assert.Equal(t, time.Second, cfg.PodEventBatchPeriod)
	assert.Equal(t, 500, cfg.FinalizerRemovalParallelism)
	assert.Equal(t, 100*time.Millisecond, cfg.StaleCacheRequeue)
	assert.Equal(t, 5*time.Minute, cfg.Expectations.TTL())
	assert.NotNil(t, cfg.FinalizerRemovals)
	assert.NotNil(t, cfg.BackoffStore)
	assert.NotNil(t, cfg.Clock)
	assert.NotNil(t, cfg.Metrics)
	assert.NotNil(t, cfg.Events)

	r, err = reconcile.New(reconcile.Config{Name: "x", ExpectationsTTL: time.Second}, c, c)
	require.NoError(t, err)
	assert.Equal(t, time.Second, r.Config().Expectations.TTL())
}

// Stores given in the Config are shared: a second reconciler sees the first one's
// expectations.
func TestConfigSharedStores(t *testing.T) {
	e := newEnv(t)
	e.create(t, job("shared", 2, 2))
	_, err := e.sync(t, "shared")
	require.NoError(t, err)
	cfg := e.r.Config()
	other, err := reconcile.New(reconcile.Config{Name: testName, Expectations: cfg.Expectations, FinalizerRemovals: cfg.FinalizerRemovals, BackoffStore: cfg.BackoffStore}, e.c, reconcile.JobStatusWriter(e.c))
	require.NoError(t, err)
	assert.Same(t, cfg.Expectations, other.Config().Expectations)
	assert.False(t, other.Config().Expectations.Satisfied("ns/shared"))
}
