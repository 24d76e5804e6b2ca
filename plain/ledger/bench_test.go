package ledger_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/jobkit/jobkit/plain/ledger"
)

var benchSizes = []int{10, 1000, 100000}

func benchUIDs(n int) []string {
	uids := make([]string, n)
	for i := range uids {
		uids[i] = fmt.Sprintf("3f1c9a2e-0000-4000-8000-%012d", i)
	}
	return uids
}

// BenchmarkRecord: n finished pods, a quarter of them already recorded, a tenth
// pending release, the default limit of 500 (the same input as the finalizers
// package's BenchmarkRecord).
func BenchmarkRecord(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			uids := benchUIDs(n)
			finished := make([]ledger.Finished[string], n)
			var u ledger.Uncounted[string]
			pending := map[string]bool{}
			for i, uid := range uids {
				o := ledger.Succeeded
				if i%3 == 0 {
					o = ledger.Failed
				}
				finished[i] = ledger.Finished[string]{UID: uid, Outcome: o}
				switch {
				case i%4 == 0 && len(u.Succeeded)+len(u.Failed) < maxUncounted/2:
					if o == ledger.Failed {
						u.Failed = append(u.Failed, uid)
					} else {
						u.Succeeded = append(u.Succeeded, uid)
					}
				case i%10 == 1:
					pending[uid] = true
				}
			}
			isPending := func(uid string) bool { return pending[uid] }
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ledger.Record(u, finished, isPending, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSettle: n UIDs in the ledger, half of their pods released.
func BenchmarkSettle(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			uids := benchUIDs(n)
			var u ledger.Uncounted[string]
			var held []string
			for i, uid := range uids {
				if i%2 == 0 {
					u.Succeeded = append(u.Succeeded, uid)
				} else {
					u.Failed = append(u.Failed, uid)
					held = append(held, uid)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ledger.Settle(u, slices.Values(held), nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSettleTypical: n pods, a ledger of 500 UIDs, half of them released.
func BenchmarkSettleTypical(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			uids := benchUIDs(n)
			var u ledger.Uncounted[string]
			var held []string
			for i, uid := range uids {
				if i < maxUncounted {
					u.Succeeded = append(u.Succeeded, uid)
				}
				if i >= maxUncounted || i%2 == 1 {
					held = append(held, uid)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ledger.Settle(u, slices.Values(held), nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
