package finalizers_test

import (
	"fmt"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plain/ledger"
)

// maxUncounted is Record's documented cap for a limit <= 0 (the Job controller's).
const maxUncounted = 500

var benchSizes = []int{10, 1000, 100000}

func benchPods(n int) []*corev1.Pod {
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace:  "ns",
			Name:       fmt.Sprintf("job-%d", i),
			UID:        types.UID(fmt.Sprintf("3f1c9a2e-0000-4000-8000-%012d", i)),
			Finalizers: []string{finalizers.Name},
		}}
	}
	return pods
}

// BenchmarkRecord: n finished pods, a quarter of them already recorded, a tenth
// pending removal, the default limit of 500.
func BenchmarkRecord(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			pods := benchPods(n)
			finished := make([]finalizers.FinishedPod, n)
			u := &batchv1.UncountedTerminatedPods{}
			pending := sets.New[types.UID]()
			for i, p := range pods {
				o := ledger.Succeeded
				if i%3 == 0 {
					o = ledger.Failed
				}
				finished[i] = finalizers.FinishedPod{Pod: p, Outcome: o}
				switch {
				case i%4 == 0 && len(u.Succeeded)+len(u.Failed) < maxUncounted/2:
					if o == ledger.Failed {
						u.Failed = append(u.Failed, p.UID)
					} else {
						u.Succeeded = append(u.Succeeded, p.UID)
					}
				case i%10 == 1:
					pending.Insert(p.UID)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := finalizers.Record(finalizers.Name, u, finished, pending, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSettle: n pods, every UID in the ledger (the worst case; a healthy
// ledger holds at most 500), half of the pods still with the finalizer.
func BenchmarkSettle(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			pods := benchPods(n)
			u := &batchv1.UncountedTerminatedPods{}
			for i, p := range pods {
				if i%2 == 0 {
					u.Succeeded = append(u.Succeeded, p.UID)
					p.Finalizers = nil
				} else {
					u.Failed = append(u.Failed, p.UID)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := finalizers.Settle(finalizers.Name, u, pods, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSettleTypical: n pods and a ledger of 500 UIDs.
func BenchmarkSettleTypical(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			pods := benchPods(n)
			u := &batchv1.UncountedTerminatedPods{}
			for i := 0; i < n && i < maxUncounted; i++ {
				u.Succeeded = append(u.Succeeded, pods[i].UID)
				if i%2 == 0 {
					pods[i].Finalizers = nil
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := finalizers.Settle(finalizers.Name, u, pods, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkRemovalPatch(b *testing.B) {
	pod := benchPods(1)[0]
	b.ReportAllocs()
	for b.Loop() {
		_ = finalizers.RemovalPatch(pod, finalizers.Name)
	}
}

func BenchmarkDecideOrphan(b *testing.B) {
	pod := benchPods(1)[0]
	pod.OwnerReferences = []metav1.OwnerReference{jobRef("job-uid")}
	j := job("job-uid", nil, batchv1.JobComplete)
	b.ReportAllocs()
	for b.Loop() {
		_ = finalizers.DecideOrphan(owner.BatchJob, pod, finalizers.JobOwner(j), batchv1.JobControllerName)
	}
}
