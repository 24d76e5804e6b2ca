package expectations_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/expectations"
)

// TestConcurrentUse runs, under -race, the pattern of a controller: workers
// raise before "API calls" while event handlers observe them, and several
// handlers see the same deletion. Every UID must be lowered exactly once and
// every key must end satisfied.
func TestConcurrentUse(t *testing.T) {
	const (
		keys       = 16
		perKey     = 200
		duplicates = 3 // handlers that observe each deletion
	)
	e, _ := newFake(t, 0)
	f := expectations.NewFinalizerRemovals[string]()
	keyOf := func(k int) string { return fmt.Sprintf("ns/job-%d", k) }
	uidOf := func(k, i int) types.UID { return types.UID(fmt.Sprintf("%d-%d", k, i)) }

	// Raise everything first, concurrently, so the observers below run against
	// known expectations.
	var wg sync.WaitGroup
	for k := range keys {
		wg.Go(func() {
			for i := range perKey {
				require.NoError(t, e.RaiseCreations(keyOf(k), 1))
				require.NoError(t, e.RaiseDeletions(keyOf(k), uidOf(k, i)))
				require.NoError(t, f.Expect(keyOf(k), uidOf(k, i)))
			}
		})
	}
	wg.Wait()
	for k := range keys {
		require.False(t, e.Satisfied(keyOf(k)), "Satisfied(%s) before observations", keyOf(k))
		require.Equal(t, perKey, f.PendingCount(keyOf(k)))
	}

	var lowered, removed atomic.Int64
	for k := range keys {
		for range duplicates {
			wg.Go(func() {
				for i := range perKey {
					e.CreationObserved(keyOf(k)) // extra ones must clamp at zero
					if e.DeletionObserved(keyOf(k), uidOf(k, i)) {
						lowered.Add(1)
					}
					if f.Observed(keyOf(k), uidOf(k, i)) {
						removed.Add(1)
					}
					_ = e.Satisfied(keyOf(k))
					_ = e.Get(keyOf(k))
					_ = f.Has(keyOf(k), uidOf(k, i))
					_ = f.Pending(keyOf(k))
				}
			})
		}
	}
	wg.Wait()

	assert.Equal(t, int64(keys*perKey), lowered.Load(), "UID deletions lowered")
	assert.Equal(t, int64(keys*perKey), removed.Load(), "finalizer removals observed")
	for k := range keys {
		st := e.Get(keyOf(k))
		assert.True(t, st.Satisfied, "Get(%s) = %+v, want satisfied", keyOf(k), st)
		assert.Zero(t, st.Creations, "Get(%s).Creations", keyOf(k))
	}
	assert.Equal(t, 0, f.Len(), "FinalizerRemovals.Len()")
	assert.Equal(t, keys, e.Len(), "Expectations.Len()")
}
