package scenarios

import (
	"context"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
)

// Kubelet is the suite's test kubelet, for integration tests of controllers that
// the suite does not run (examples/trainingjob): it plays the node for the pods of
// one namespace through the API, as described in the package doc. Its methods are
// safe for concurrent use.
type Kubelet struct{ k *kubelet }

// Outcome is what a Kubelet does with a running pod; the zero Outcome keeps it
// running.
type Outcome struct{ o outcome }

// Succeed ends a pod with exit code 0 (phase Succeeded).
func Succeed() Outcome { return Outcome{succeed} }

// FailWith ends a pod with exit code code (phase Failed).
func FailWith(code int32) Outcome { return Outcome{failWith(code)} }

// NewKubelet returns a Kubelet for the namespace ns that talks through cs; it acts
// once Run runs.
func NewKubelet(cs kubernetes.Interface, ns string) *Kubelet { return &Kubelet{newKubelet(cs, ns)} }

// Run plays the node until ctx ends.
func (k *Kubelet) Run(ctx context.Context) { k.k.run(ctx) }

// SetPolicy sets the outcome of each running pod, asked once per pod until it gives
// a non-zero Outcome; nil keeps every pod running.
func (k *Kubelet) SetPolicy(policy func(*corev1.Pod) Outcome) {
	if policy == nil {
		k.k.setPolicy(nil)
		return
	}
	k.k.setPolicy(func(p *corev1.Pod) outcome { return policy(p).o })
}

// StatusWrites records the writes to the status subresource of one resource that go
// through a transport it wraps, with the API server's answers: accepted (2xx), or
// rejected (anything but 2xx, 409 Conflict and 404 NotFound). Safe for concurrent use.
type StatusWrites struct{ w statusWrites }

// NewStatusWrites watches the status writes of resource (plural, as in URLs) of
// the API group.
func NewStatusWrites(group, resource string) *StatusWrites {
	return &StatusWrites{statusWrites{group: group, resource: resource}}
}

// Wrap is a rest.Config.WrapTransport.
func (s *StatusWrites) Wrap(rt http.RoundTripper) http.RoundTripper { return s.w.wrap(rt) }

// Counts returns the number of writes accepted and a description of each rejected.
func (s *StatusWrites) Counts() (accepted int, rejected []string) { return s.w.counts() }
