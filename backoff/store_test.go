package backoff_test

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobkit/jobkit/backoff"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
)

func TestStore(t *testing.T) {
	var s backoff.Store[string] // the zero value is ready to use

	got, ok := s.Get("ns/a")
	assert.False(t, ok, "Get on an empty store reported a record")
	assert.Equal(t, plainbackoff.Record{}, got)

	rec := plainbackoff.Record{Failures: 2, LastFailure: t0}
	s.Set("ns/a", rec)
	got, ok = s.Get("ns/a")
	require.True(t, ok)
	if diff := cmp.Diff(rec, got); diff != "" {
		t.Errorf("Get after Set mismatch (-want +got):\n%s", diff)
	}
	assert.Equal(t, 1, s.Len())

	updated := s.Update("ns/a", func(r plainbackoff.Record) plainbackoff.Record {
		return r.Advance(nil, []time.Time{at(time.Second)})
	})
	want := plainbackoff.Record{Failures: 3, LastFailure: at(time.Second)}
	if diff := cmp.Diff(want, updated); diff != "" {
		t.Errorf("Update result mismatch (-want +got):\n%s", diff)
	}
	got, _ = s.Get("ns/a")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Get after Update mismatch (-want +got):\n%s", diff)
	}

	var seen plainbackoff.Record
	s.Update("ns/new", func(r plainbackoff.Record) plainbackoff.Record {
		seen = r
		return plainbackoff.Record{Failures: 1, LastFailure: t0}
	})
	assert.Equal(t, plainbackoff.Record{}, seen, "Update of a missing key must see the zero Record")
	assert.Equal(t, 2, s.Len())

	// A success resets the record; a zero record is not kept.
	s.Update("ns/new", func(r plainbackoff.Record) plainbackoff.Record { return r.Advance([]time.Time{at(time.Minute)}, nil) })
	_, ok = s.Get("ns/new")
	assert.False(t, ok, "a zero record must not be kept")
	s.Set("ns/a", plainbackoff.Record{})
	_, ok = s.Get("ns/a")
	assert.False(t, ok, "Set of a zero record must remove the key")
	assert.Equal(t, 0, s.Len())

	s.Set("ns/b", rec)
	s.Delete("ns/b")
	s.Delete("ns/missing")
	_, ok = s.Get("ns/b")
	assert.False(t, ok, "Get after Delete reported a record")
	assert.Equal(t, 0, s.Len())
}

// TestStoreConcurrent runs readers and writers on shared keys; under -race it checks
// the locking, and the final counts check that no Update was lost.
func TestStoreConcurrent(t *testing.T) {
	const workers, perWorker, keys = 8, 500, 4
	var s backoff.Store[int]
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				key := (w + i) % keys
				s.Update(key, func(r plainbackoff.Record) plainbackoff.Record {
					return r.Advance(nil, []time.Time{at(time.Duration(i) * time.Millisecond)})
				})
				_, _ = s.Get(key)
				_ = s.Len()
				s.Delete(keys + w) // a key nobody sets
			}
		})
	}
	wg.Wait()
	var total int32
	for k := range keys {
		r, ok := s.Get(k)
		require.True(t, ok, "key %d lost", k)
		assert.True(t, r.LastFailure.Equal(at((perWorker-1)*time.Millisecond)), "key %d: LastFailure = %v", k, r.LastFailure)
		total += r.Failures
	}
	assert.Equal(t, int32(workers*perWorker), total, "Updates were lost")
}

func BenchmarkStore(b *testing.B) {
	for _, n := range []int{10, 1000, 100000} {
		b.Run("keys="+strconv.Itoa(n), func(b *testing.B) {
			var s backoff.Store[string]
			names := make([]string, n)
			for i := range names {
				names[i] = "ns/job-" + strconv.Itoa(i)
				s.Set(names[i], plainbackoff.Record{Failures: 1, LastFailure: t0})
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					key := names[i%n]
					if i%4 == 0 {
						s.Update(key, func(r plainbackoff.Record) plainbackoff.Record {
							return plainbackoff.Record{Failures: r.Failures%100 + 1, LastFailure: t0}
						})
					} else {
						_, _ = s.Get(key)
					}
					i++
				}
			})
		})
	}
}
