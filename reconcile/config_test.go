package reconcile_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/plan"
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
	// Without clients, for SyncChildJobs: New succeeds, Sync refuses.
	r, err := reconcile.New(reconcile.Config{Name: "x"}, nil, nil)
	require.NoError(t, err)
	_, err = r.Sync(t.Context(), plan.JobWorkload(&batchv1.Job{}), func(*plan.Workload) ([]*corev1.Pod, error) { return nil, nil })
	assert.True(t, errors.Is(err, reconcile.ErrInvalidArgument), "Sync() of a Reconciler without clients: error = %v", err)
}

// WithDefaults fills in every default (Owner, durations, parallelism, clock,
// metrics, events, stores) and leaves set values alone; filling in a filled-in
// Config changes nothing, so New keeps the stores of the Config it is given.
func TestConfigWithDefaults(t *testing.T) {
	cfg, err := reconcile.Config{Name: "x"}.WithDefaults()
	require.NoError(t, err)
	assert.Equal(t, "x", cfg.Name)
	assert.Equal(t, owner.BatchJob, cfg.Owner)
	assert.Equal(t, time.Second, cfg.PodEventBatchPeriod)
	assert.Equal(t, 5000, cfg.PodEventBatchPods)
	assert.Equal(t, 500, cfg.FinalizerRemovalParallelism)
	assert.Equal(t, 30*time.Second, cfg.UncertainCreationTimeout)
	assert.Equal(t, 100*time.Millisecond, cfg.StaleCacheRequeue)
	assert.Equal(t, 100*time.Millisecond, cfg.ConflictRequeue)
	assert.Equal(t, 5*time.Minute, cfg.Expectations.TTL())
	assert.NotNil(t, cfg.FinalizerRemovals)
	assert.NotNil(t, cfg.BackoffStore)
	assert.NotNil(t, cfg.Clock)
	assert.NotNil(t, cfg.Metrics)
	assert.NotNil(t, cfg.Events)

	again, err := cfg.WithDefaults()
	require.NoError(t, err)
	assert.Equal(t, cfg, again, "filling in a filled-in Config")

	set, err := reconcile.Config{Name: "x", ExpectationsTTL: time.Second, ConflictRequeue: time.Minute, FinalizerRemovalParallelism: 1, PodEventBatchPods: -1}.WithDefaults()
	require.NoError(t, err)
	assert.Equal(t, -1, set.PodEventBatchPods, "negative PodEventBatchPods: a fixed period, kept")
	assert.Equal(t, time.Second, set.Expectations.TTL())
	assert.Equal(t, time.Minute, set.ConflictRequeue)
	assert.Equal(t, 1, set.FinalizerRemovalParallelism)

	_, err = reconcile.Config{Name: "x", MaxUncounted: -1}.WithDefaults()
	assert.ErrorIs(t, err, reconcile.ErrInvalidConfig)
	assert.Contains(t, err.Error(), "MaxUncounted: -1")
}

// Stores given in the Config are shared: a second reconciler over the first one's
// stores waits for the creations the first one made, where one with stores of its
// own creates the pods again.
func TestConfigSharedStores(t *testing.T) {
	tests := []struct {
		name        string
		shared      bool
		wantCreated int
	}{
		{name: "shared stores", shared: true, wantCreated: 0},
		{name: "stores of its own", shared: false, wantCreated: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.create(t, job("shared", 2, 2))
			res, err := e.sync(t, "shared")
			require.NoError(t, err)
			require.Equal(t, 2, res.Created)
			cfg := reconcile.Config{Name: testName, Clock: e.c.Clock()}
			if tc.shared {
				cfg.Expectations, cfg.FinalizerRemovals, cfg.BackoffStore = e.cfg.Expectations, e.cfg.FinalizerRemovals, e.cfg.BackoffStore
			}
			other, err := reconcile.New(cfg, e.c, reconcile.JobStatusWriter(e.c))
			require.NoError(t, err)
			// The Job as written by the first sync; no event is delivered, so the
			// cache shows none of its pods yet.
			res, err = other.Sync(t.Context(), plan.JobWorkload(e.apiJob(t, "shared")), e.c.Cache().OwnerPods)
			require.NoError(t, err)
			assert.Equal(t, tc.wantCreated, res.Created, "creations of the second reconciler: %+v", res.Report)
		})
	}
}
