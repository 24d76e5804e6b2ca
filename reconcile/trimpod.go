package reconcile

import (
	"unique"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TrimPod keeps of pod only what the Reconciler's decisions and writes read, and
// returns pod. It is the body of a pod informer transform (client-go's
// SharedIndexInformer.SetTransform, controller-runtime's cache.ByObject Transform):
// a cached pod then holds a few hundred bytes instead of its whole spec, which at
// 20,000 pods is most of a controller's heap.
//
// Kept: all of metadata but managedFields (name, namespace, UID, resourceVersion,
// labels, annotations, owner references, finalizers, the creation and deletion
// timestamps and grace period); of the spec, nodeName, hostname, subdomain,
// restartPolicy, terminationGracePeriodSeconds, schedulingGates and, of every init
// and regular container, its name and restartPolicy (what tells a sidecar apart);
// of the status, phase, conditions, reason, message, startTime, observedGeneration
// and, of every init and regular container status, its name, state,
// lastTerminationState, ready, started and restartCount. Dropped: managedFields, the
// rest of the spec (images, commands, environment, volumes, resources, affinity,
// tolerations, ...), the addresses, QoS class and resource status, the ephemeral
// container statuses and the containers' image and resource details.
//
// Nothing the plan, the pod failure policy, the removal order, the backoff, the
// in-place restart barrier or the orphan cleanup reads is dropped: a plan of the
// trimmed pods is the plan of the full ones. Every pod write of the Reconciler is a
// strategic merge patch of its own fields (owner references, finalizers, with the
// UID and resourceVersion as preconditions) or a delete, and new pods come from the
// owner's template, so no write sends a trimmed pod back. Code of your own that
// reads the same cache (a Config hook, another controller sharing a
// controller-runtime cache) must read no dropped field, or must not trim.
//
// The strings that pods repeat (the namespace, label and annotation keys, label
// values such as the owner's name and UID, owner references, finalizers, the node,
// container names, condition types and statuses) are replaced by one shared copy
// each (package unique): a decoder allocates every string anew, and at 20,000 pods
// of one Job those copies were about a seventh of the cached pods' heap.
//
// TrimPod assigns new values to pod's fields and never writes into the slices,
// maps or pointers pod shares, so trimming a shallow copy leaves the original as it
// was. A nil pod is returned as it is.
func TrimPod(pod *corev1.Pod) *corev1.Pod {
	if pod == nil {
		return nil
	}
	pod.ManagedFields = nil
	pod.ObjectMeta = internMeta(&pod.ObjectMeta)
	s := &pod.Spec
	pod.Spec = corev1.PodSpec{
		NodeName:                      intern(s.NodeName),
		Hostname:                      s.Hostname,
		Subdomain:                     s.Subdomain,
		RestartPolicy:                 s.RestartPolicy,
		TerminationGracePeriodSeconds: s.TerminationGracePeriodSeconds,
		SchedulingGates:               s.SchedulingGates,
		InitContainers:                trimContainers(s.InitContainers),
		Containers:                    trimContainers(s.Containers),
	}
	st := &pod.Status
	pod.Status = corev1.PodStatus{
		Phase:                 corev1.PodPhase(intern(string(st.Phase))),
		Conditions:            internConditions(st.Conditions),
		Reason:                st.Reason,
		Message:               st.Message,
		StartTime:             st.StartTime,
		ObservedGeneration:    st.ObservedGeneration,
		InitContainerStatuses: trimStatuses(st.InitContainerStatuses),
		ContainerStatuses:     trimStatuses(st.ContainerStatuses),
	}
	return pod
}

func trimContainers(cs []corev1.Container) []corev1.Container {
	if cs == nil {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i := range cs {
		out[i] = corev1.Container{Name: intern(cs[i].Name), RestartPolicy: cs[i].RestartPolicy}
	}
	return out
}

func trimStatuses(ss []corev1.ContainerStatus) []corev1.ContainerStatus {
	if ss == nil {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(ss))
	for i := range ss {
		s := &ss[i]
		out[i] = corev1.ContainerStatus{
			Name:                 intern(s.Name),
			State:                s.State,
			LastTerminationState: s.LastTerminationState,
			Ready:                s.Ready,
			Started:              s.Started,
			RestartCount:         s.RestartCount,
		}
	}
	return out
}

// intern returns the one shared copy of s.
func intern(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

// internMeta returns m with its repeated strings interned, in new maps and slices.
func internMeta(m *metav1.ObjectMeta) metav1.ObjectMeta {
	out := *m
	out.Namespace, out.GenerateName = intern(m.Namespace), intern(m.GenerateName)
	out.Labels = internMap(m.Labels, true)
	out.Annotations = internMap(m.Annotations, false) // values: often one pod's own
	if m.OwnerReferences != nil {
		out.OwnerReferences = make([]metav1.OwnerReference, len(m.OwnerReferences))
		for i, r := range m.OwnerReferences {
			r.APIVersion, r.Kind, r.Name, r.UID = intern(r.APIVersion), intern(r.Kind), intern(r.Name), types.UID(intern(string(r.UID)))
			out.OwnerReferences[i] = r
		}
	}
	if m.Finalizers != nil {
		out.Finalizers = make([]string, len(m.Finalizers))
		for i, f := range m.Finalizers {
			out.Finalizers[i] = intern(f)
		}
	}
	return out
}

// internMap returns a copy of m with its keys interned, and its values when
// values is set.
func internMap(m map[string]string, values bool) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if values {
			v = intern(v)
		}
		out[intern(k)] = v
	}
	return out
}

// internConditions returns a copy of cs with the types, statuses and reasons
// interned.
func internConditions(cs []corev1.PodCondition) []corev1.PodCondition {
	if cs == nil {
		return nil
	}
	out := make([]corev1.PodCondition, len(cs))
	for i, c := range cs {
		c.Type, c.Status = corev1.PodConditionType(intern(string(c.Type))), corev1.ConditionStatus(intern(string(c.Status)))
		c.Reason = intern(c.Reason)
		out[i] = c
	}
	return out
}
