package clientgo_test

import (
	"fmt"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// newFakeClientset returns client-go's fake clientset with what the controller
// needs of the API server and the fake lacks: names from generateName and UIDs for
// the pods it creates. The fake checks no preconditions and runs no kubelet; the
// integration tests use a real API server for that.
func newFakeClientset(objects ...runtime.Object) *fake.Clientset {
	cs := fake.NewClientset(objects...)
	var n atomic.Int64
	cs.PrependReactor("create", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		pod := action.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		i := n.Add(1)
		if pod.Name == "" && pod.GenerateName != "" {
			pod.Name = fmt.Sprintf("%s%05d", pod.GenerateName, i)
		}
		if pod.UID == "" {
			pod.UID = types.UID(fmt.Sprintf("pod-uid-%d", i))
		}
		if pod.Status.Phase == "" {
			pod.Status.Phase = corev1.PodPending
		}
		return false, nil, nil // the tracker stores the named pod
	})
	return cs
}
