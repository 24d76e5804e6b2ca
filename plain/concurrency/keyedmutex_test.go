package concurrency_test

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobkit/jobkit/plain/concurrency"
)

func TestKeyedMutexTryLock(t *testing.T) {
	var m concurrency.KeyedMutex[string]

	unlockA, ok := m.TryLock("a")
	require.True(t, ok, "TryLock(a) on a free key")
	assert.True(t, m.Held("a"))

	again, ok := m.TryLock("a")
	assert.False(t, ok, "TryLock(a) while held")
	require.NotNil(t, again, "a failed TryLock returns a no-op unlock")
	again() // must not release the holder's lock
	assert.True(t, m.Held("a"), "the no-op unlock of a failed TryLock released the key")

	unlockB, ok := m.TryLock("b")
	require.True(t, ok, "TryLock(b) while a is held")
	assert.Equal(t, 2, m.Len())

	unlockA()
	assert.False(t, m.Held("a"))
	unlockA2, ok := m.TryLock("a")
	require.True(t, ok, "TryLock(a) after unlock")

	unlockA() // a second call of the first unlock must not release the new holder
	assert.True(t, m.Held("a"), "a stale unlock released a lock taken later")

	unlockA2()
	unlockB()
	assert.Equal(t, 0, m.Len(), "keys left after every unlock")
}

func TestKeyedMutexTryLockAll(t *testing.T) {
	tests := []struct {
		name    string
		held    []string
		keys    []string
		wantOK  bool
		wantLen int // keys held right after the call
	}{
		{name: "no keys", keys: nil, wantOK: true, wantLen: 0},
		{name: "all free", keys: []string{"job/unit", "queue/gpu"}, wantOK: true, wantLen: 2},
		{name: "repeated key is locked once", keys: []string{"x", "x", "y"}, wantOK: true, wantLen: 2},
		{name: "first busy", held: []string{"job/unit"}, keys: []string{"job/unit", "queue/gpu"}, wantOK: false, wantLen: 1},
		{name: "last busy: none taken", held: []string{"queue/gpu"}, keys: []string{"job/unit", "queue/gpu"}, wantOK: false, wantLen: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m concurrency.KeyedMutex[string]
			var unlocks []func()
			for _, k := range tt.held {
				u, ok := m.TryLock(k)
				require.True(t, ok)
				unlocks = append(unlocks, u)
			}
			keys := append([]string(nil), tt.keys...)
			unlock, ok := m.TryLockAll(keys...)
			require.Equal(t, tt.wantOK, ok, "TryLockAll(%q) ok", tt.keys)
			assert.Equal(t, tt.wantLen, m.Len())
			for i := range keys {
				keys[i] = "changed" // the lock must not depend on the caller's slice
			}
			unlock()
			unlock()
			for _, u := range unlocks {
				u()
			}
			assert.Equal(t, 0, m.Len(), "keys left after every unlock")
		})
	}
}

// TestKeyedMutexConcurrent hammers a few keys from many goroutines: at most
// one holder per key at any time, and nothing is left afterwards. Run with
// -race.
func TestKeyedMutexConcurrent(t *testing.T) {
	var m concurrency.KeyedMutex[int]
	const keys, workers, rounds = 4, 16, 2000
	var holders [keys]atomic.Int32
	var acquired atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				k := (w + r) % keys
				var unlock func()
				var ok bool
				if r%3 == 0 {
					unlock, ok = m.TryLockAll(k, (k+1)%keys)
				} else {
					unlock, ok = m.TryLock(k)
				}
				if !ok {
					continue
				}
				acquired.Add(1)
				if n := holders[k].Add(1); n != 1 {
					t.Errorf("key %d has %d holders", k, n)
				}
				holders[k].Add(-1)
				unlock()
			}
		})
	}
	wg.Wait()
	assert.Positive(t, acquired.Load())
	assert.Equal(t, 0, m.Len(), "keys left after every unlock")
}

// TestKeyedMutexReleasesKeys locks many distinct keys and checks that none
// remains once all are unlocked: the map does not grow with every key seen.
func TestKeyedMutexReleasesKeys(t *testing.T) {
	var m concurrency.KeyedMutex[string]
	unlocks := make([]func(), 0, 10000)
	for i := range 10000 {
		u, ok := m.TryLock("job-" + strconv.Itoa(i))
		require.True(t, ok)
		unlocks = append(unlocks, u)
	}
	assert.Equal(t, 10000, m.Len())
	for _, u := range unlocks {
		u()
	}
	assert.Equal(t, 0, m.Len())
	_, ok := m.TryLock("job-1")
	assert.True(t, ok, "a key can be locked again after the map emptied")
}
