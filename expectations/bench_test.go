package expectations_test

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/expectations"
)

var sizes = []int{10, 1000, 100000}

func keys(n int) []string {
	ks := make([]string, n)
	for i := range ks {
		ks[i] = "ns/job-" + strconv.Itoa(i)
	}
	return ks
}

func uids(n int) []types.UID {
	us := make([]types.UID, n)
	for i := range us {
		us[i] = types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i))
	}
	return us
}

// BenchmarkSatisfied checks one key among n keys that each wait for a creation.
func BenchmarkSatisfied(b *testing.B) {
	for _, n := range sizes {
		b.Run("keys="+strconv.Itoa(n), func(b *testing.B) {
			e, _ := newFake(b, 0)
			ks := keys(n)
			for _, k := range ks {
				must(b, e.ExpectCreations(k, 1))
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				e.Satisfied(ks[i%n])
				i++
			}
		})
	}
}

// BenchmarkCreateCycle is one create of a sync: raise, then observe.
func BenchmarkCreateCycle(b *testing.B) {
	e, _ := newFake(b, 0)
	b.ReportAllocs()
	for b.Loop() {
		_ = e.RaiseCreations(key, 1)
		e.CreationObserved(key)
	}
}

// BenchmarkExpectDeletions replaces a record with n UIDs to delete.
func BenchmarkExpectDeletions(b *testing.B) {
	for _, n := range sizes {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			e, _ := newFake(b, 0)
			us := uids(n)
			b.ReportAllocs()
			for b.Loop() {
				_ = e.ExpectDeletions(key, us...)
			}
		})
	}
}

// BenchmarkDeleteAndObserveByUID expects n UID deletions and observes each
// one twice (deletionTimestamp update, then the delete event).
func BenchmarkDeleteAndObserveByUID(b *testing.B) {
	for _, n := range sizes {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			e, _ := newFake(b, 0)
			us := uids(n)
			b.ReportAllocs()
			for b.Loop() {
				_ = e.RaiseDeletions(key, us...)
				for _, u := range us {
					e.DeletionObserved(key, u)
					e.DeletionObserved(key, u)
				}
			}
		})
	}
}

// BenchmarkFinalizerRemovals expects n removals, checks each with Has,
// copies the set once and observes them all.
func BenchmarkFinalizerRemovals(b *testing.B) {
	for _, n := range sizes {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			f := expectations.NewFinalizerRemovals[string]()
			us := uids(n)
			b.ReportAllocs()
			for b.Loop() {
				_ = f.Expect(key, us...)
				for _, u := range us {
					f.Has(key, u)
				}
				_ = f.Pending(key)
				for _, u := range us {
					f.Observed(key, u)
				}
			}
		})
	}
}

// BenchmarkFinalizerRemovalsHas is the per-pod check done while counting pods.
func BenchmarkFinalizerRemovalsHas(b *testing.B) {
	f := expectations.NewFinalizerRemovals[string]()
	us := uids(1000)
	_ = f.Expect(key, us...)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		f.Has(key, us[i%len(us)])
		i++
	}
}

// BenchmarkParallel mixes the calls of many workers and event handlers on
// 1000 keys: raise, observe, check.
func BenchmarkParallel(b *testing.B) {
	e, _ := newFake(b, 0)
	ks := keys(1000)
	var next atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := int(next.Add(1)) * 7919
		for pb.Next() {
			k := ks[i%len(ks)]
			_ = e.RaiseCreations(k, 1)
			e.CreationObserved(k)
			e.Satisfied(k)
			i++
		}
	})
}
