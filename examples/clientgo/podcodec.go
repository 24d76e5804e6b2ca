package clientgo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// NewClientset returns a clientset for cfg, as kubernetes.NewForConfig does, whose
// core group decodes pods in protobuf without their metadata.managedFields
// (PodsWithoutManagedFields): the pod informer, the pod lists and the answers to
// pod writes then skip what no controller reads, which is most of a pod's bytes
// once a kubelet and a controller have written it. Every group shares one HTTP
// client (cfg's transport, with what cfg.Wrap added) and one rate limiter (cfg's
// RateLimiter, or a token bucket of cfg.QPS and cfg.Burst), as one clientset does.
// Answers in JSON, and objects of any other kind, are decoded as client-go does.
func NewClientset(cfg *rest.Config) (kubernetes.Interface, error) {
	c := rest.CopyConfig(cfg)
	if c.RateLimiter == nil && c.QPS > 0 {
		if c.Burst <= 0 {
			return nil, fmt.Errorf("clientgo.NewClientset: burst %d: must be positive when QPS is set", c.Burst)
		}
		c.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(c.QPS, c.Burst)
	}
	httpClient, err := rest.HTTPClientFor(c)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, err
	}
	core := rest.CopyConfig(c)
	core.GroupVersion = &corev1.SchemeGroupVersion
	core.APIPath = "/api"
	core.NegotiatedSerializer = PodsWithoutManagedFields(rest.CodecFactoryForGeneratedClient(scheme.Scheme, scheme.Codecs).WithoutConversion())
	if core.UserAgent == "" {
		core.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.RESTClientForConfigAndClient(core, httpClient)
	if err != nil {
		return nil, err
	}
	return &podClientset{Clientset: cs, core: corev1client.New(rc)}, nil
}

// podClientset is a clientset whose core group is built with
// PodsWithoutManagedFields.
type podClientset struct {
	*kubernetes.Clientset
	core *corev1client.CoreV1Client
}

// CoreV1 returns the core group client that decodes pods without managedFields.
func (c *podClientset) CoreV1() corev1client.CoreV1Interface { return c.core }

// PodsWithoutManagedFields wraps ns, a client's negotiated serializer, so that a Pod
// or a PodList in protobuf is decoded without metadata.managedFields: the field is
// skipped in the wire bytes, never decoded. Everything else (JSON, other kinds,
// encoding, malformed input) goes to ns as it is.
func PodsWithoutManagedFields(ns runtime.NegotiatedSerializer) runtime.NegotiatedSerializer {
	return podNegotiator{ns}
}

type podNegotiator struct{ runtime.NegotiatedSerializer }

func (n podNegotiator) SupportedMediaTypes() []runtime.SerializerInfo {
	infos := n.NegotiatedSerializer.SupportedMediaTypes()
	out := make([]runtime.SerializerInfo, len(infos))
	for i, info := range infos {
		if info.MediaType == runtime.ContentTypeProtobuf && info.Serializer != nil {
			info.Serializer = podSerializer{info.Serializer}
		}
		out[i] = info
	}
	return out
}

// podSerializer decodes protobuf Pods and PodLists without managedFields.
type podSerializer struct{ runtime.Serializer }

// protobufPrefix opens every protobuf-encoded Kubernetes object.
var protobufPrefix = []byte{0x6b, 0x38, 0x73, 0x00}

// Field numbers of the Kubernetes protobuf messages read here (generated.proto of
// k8s.io/apimachinery and k8s.io/api).
const (
	unknownTypeMeta        = 1  // runtime.Unknown.typeMeta
	unknownRaw             = 2  // runtime.Unknown.raw
	unknownContentEncoding = 3  // runtime.Unknown.contentEncoding
	unknownContentType     = 4  // runtime.Unknown.contentType
	typeMetaAPIVersion     = 1  // runtime.TypeMeta.apiVersion
	typeMetaKind           = 2  // runtime.TypeMeta.kind
	podMetadata            = 1  // Pod.metadata
	podSpec                = 2  // Pod.spec
	podStatus              = 3  // Pod.status
	podListMetadata        = 1  // PodList.metadata
	podListItems           = 2  // PodList.items
	objectMetaManaged      = 17 // ObjectMeta.managedFields
)

func (s podSerializer) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	kind, raw, ok := podEnvelope(data)
	if !ok {
		return s.Serializer.Decode(data, defaults, into)
	}
	gvk := corev1.SchemeGroupVersion.WithKind(kind)
	switch kind {
	case "Pod":
		pod, ok := into.(*corev1.Pod)
		if into != nil && !ok {
			break
		}
		if pod == nil {
			pod = &corev1.Pod{}
		}
		*pod = corev1.Pod{}
		if err := unmarshalPod(pod, raw); err != nil {
			break // malformed: the full decoder says what is wrong
		}
		return pod, &gvk, nil
	case "PodList":
		list, ok := into.(*corev1.PodList)
		if into != nil && !ok {
			break
		}
		if list == nil {
			list = &corev1.PodList{}
		}
		*list = corev1.PodList{}
		if err := unmarshalPodList(list, raw); err != nil {
			break
		}
		return list, &gvk, nil
	}
	return s.Serializer.Decode(data, defaults, into)
}

// podEnvelope reads the runtime.Unknown envelope of a protobuf object and returns
// its kind ("Pod" or "PodList") and raw bytes when it is one of them in the core
// group's v1, not content-encoded.
func podEnvelope(data []byte) (kind string, raw []byte, ok bool) {
	if !bytes.HasPrefix(data, protobufPrefix) {
		return "", nil, false
	}
	var apiVersion string
	err := eachField(data[len(protobufPrefix):], func(num, wire uint64, _, value []byte) error {
		if num <= unknownContentType && wire != wireBytes {
			return errWireType
		}
		switch num {
		case unknownTypeMeta:
			return eachField(value, func(num, wire uint64, _, v []byte) error {
				if num <= typeMetaKind && wire != wireBytes {
					return errWireType
				}
				switch num {
				case typeMetaAPIVersion:
					apiVersion = string(v)
				case typeMetaKind:
					kind = string(v)
				}
				return nil
			})
		case unknownRaw:
			raw = value
		case unknownContentEncoding:
			if len(value) > 0 {
				return errors.New("content-encoded")
			}
		}
		return nil
	})
	if err != nil || apiVersion != "v1" || (kind != "Pod" && kind != "PodList") {
		return "", nil, false
	}
	return kind, raw, true
}

// unmarshalPod decodes the Pod message raw into pod, which is empty, leaving
// metadata.managedFields out. The generated Unmarshal methods merge into what they
// are given, so the metadata is decoded from the runs of fields between the
// managedFields entries, in place: nothing is copied.
func unmarshalPod(pod *corev1.Pod, raw []byte) error {
	return eachField(raw, func(num, wire uint64, _, value []byte) error {
		if num <= podStatus && wire != wireBytes {
			return errWireType
		}
		switch num {
		case podMetadata:
			return unmarshalMetaWithoutManaged(&pod.ObjectMeta, value)
		case podSpec:
			return pod.Spec.Unmarshal(value)
		case podStatus:
			return pod.Status.Unmarshal(value)
		}
		return nil // unknown fields are skipped, as the generated code does
	})
}

func unmarshalMetaWithoutManaged(m *metav1.ObjectMeta, b []byte) error {
	run := b[:0]
	flush := func() error {
		if len(run) == 0 {
			return nil
		}
		err := m.Unmarshal(run)
		run = run[len(run):]
		return err
	}
	err := eachField(b, func(num, wire uint64, field, _ []byte) error {
		if num == objectMetaManaged {
			if wire != wireBytes {
				return errWireType
			}
			if err := flush(); err != nil {
				return err
			}
			run = field[len(field):] // the next run starts after this field
			return nil
		}
		run = run[:len(run)+len(field)] // field follows run in b
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// unmarshalPodList decodes the PodList message raw into list, which is empty,
// every item without metadata.managedFields.
func unmarshalPodList(list *corev1.PodList, raw []byte) error {
	return eachField(raw, func(num, wire uint64, _, value []byte) error {
		if num <= podListItems && wire != wireBytes {
			return errWireType
		}
		switch num {
		case podListMetadata:
			return list.ListMeta.Unmarshal(value)
		case podListItems:
			list.Items = append(list.Items, corev1.Pod{})
			return unmarshalPod(&list.Items[len(list.Items)-1], value)
		}
		return nil
	})
}

// errWireType is a known field of an unexpected wire type: the input goes to the
// full decoder, which refuses it with the details.
var errWireType = errors.New("unexpected wire type")

// Protobuf wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// eachField calls fn with every field of the protobuf message b: its number, its
// wire type, its whole encoding (tag included) and, for a length-delimited field,
// its value (nil otherwise). Groups, which Kubernetes messages do not use, are an
// error.
func eachField(b []byte, fn func(num, wire uint64, field, value []byte) error) error {
	for len(b) > 0 {
		tag, n := binary.Uvarint(b)
		if n <= 0 {
			return io.ErrUnexpectedEOF
		}
		num, wire := tag>>3, tag&7
		size := n
		var value []byte
		switch wire {
		case wireVarint:
			_, m := binary.Uvarint(b[n:])
			if m <= 0 {
				return io.ErrUnexpectedEOF
			}
			size += m
		case wireFixed64:
			size += 8
		case wireFixed32:
			size += 4
		case wireBytes:
			l, m := binary.Uvarint(b[n:])
			if m <= 0 || l > uint64(len(b)-n-m) {
				return io.ErrUnexpectedEOF
			}
			value = b[n+m : n+m+int(l)]
			size += m + int(l)
		default:
			return fmt.Errorf("protobuf field %d: wire type %d not supported", num, wire)
		}
		if num == 0 || size > len(b) {
			return io.ErrUnexpectedEOF
		}
		if err := fn(num, wire, b[:size], value); err != nil {
			return err
		}
		b = b[size:]
	}
	return nil
}
