package clientgo_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/examples/clientgo"
)

// writtenPod is a pod as the API server sends it once a controller created it and a
// kubelet (kwok) wrote its status: most of its bytes are managedFields.
func writtenPod(name string) *corev1.Pod {
	now := metav1.NewTime(time.Unix(1700000000, 0))
	fields := func(n int) *metav1.FieldsV1 {
		b := []byte(`{"f:metadata":{"f:labels":{"f:l0":{}`)
		for i := 1; len(b) < n; i++ {
			b = fmt.Appendf(b, `,"f:l%d":{}`, i)
		}
		f := &metav1.FieldsV1{}
		if err := f.UnmarshalJSON(append(b, "}}}"...)); err != nil {
			panic(err)
		}
		return f
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, GenerateName: "work-", Namespace: "ns", UID: types.UID("uid-" + name), ResourceVersion: "42",
			CreationTimestamp: now,
			Labels:            map[string]string{"batch.kubernetes.io/job-name": "work", "batch.kubernetes.io/controller-uid": "job-uid"},
			Annotations:       map[string]string{"note": "kept"},
			OwnerReferences:   []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "work", UID: "job-uid", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
			Finalizers:        []string{batchv1.JobTrackingFinalizer},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "jobkit-clientgo", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: fields(900)},
				{Manager: "kwok", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: fields(600), Subresource: "status"},
			},
		},
		Spec: corev1.PodSpec{
			NodeName: "node-1", RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodSucceeded, StartTime: &now,
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: now}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, FinishedAt: now}}}},
		},
	}
}

func withoutManaged(p *corev1.Pod) *corev1.Pod {
	p = p.DeepCopy()
	p.ManagedFields = nil
	return p
}

// encode encodes obj with its kind set, as the API server sends it.
func encode(t testing.TB, s runtime.Encoder, obj runtime.Object) []byte {
	t.Helper()
	obj = obj.DeepCopyObject()
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil {
		t.Fatal(err)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvks[0])
	data, err := runtime.Encode(s, obj)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestPodsWithoutManagedFields(t *testing.T) {
	pb := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	js := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme.Scheme, scheme.Scheme, json.SerializerOptions{})
	codecs := clientgo.PodsWithoutManagedFields(scheme.Codecs.WithoutConversion())
	decoders := map[string]runtime.Decoder{}
	for _, info := range codecs.SupportedMediaTypes() {
		decoders[info.MediaType] = info.Serializer
	}
	if decoders[runtime.ContentTypeProtobuf] == nil || decoders[runtime.ContentTypeJSON] == nil {
		t.Fatalf("serializers for %v, want protobuf and JSON", decoders)
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "work", Namespace: "ns", ManagedFields: writtenPod("x").ManagedFields}}
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "7"}, Items: []corev1.Pod{*writtenPod("a"), *writtenPod("b"), *withoutManaged(writtenPod("c"))}}
	wantList := &corev1.PodList{ListMeta: list.ListMeta, Items: []corev1.Pod{*withoutManaged(writtenPod("a")), *withoutManaged(writtenPod("b")), *withoutManaged(writtenPod("c"))}}
	stale := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "stale", Labels: map[string]string{"old": "label"}}}
	truncated := encode(t, pb, writtenPod("p"))
	truncated = truncated[:len(truncated)-10]

	for _, tc := range []struct {
		name    string
		media   string
		data    []byte
		into    runtime.Object
		want    runtime.Object
		wantErr bool
	}{
		{"a pod, managedFields left out", runtime.ContentTypeProtobuf, encode(t, pb, writtenPod("p")), nil, withoutManaged(writtenPod("p")), false},
		{"into a pod that held another", runtime.ContentTypeProtobuf, encode(t, pb, writtenPod("p")), stale, withoutManaged(writtenPod("p")), false},
		{"a pod without managedFields", runtime.ContentTypeProtobuf, encode(t, pb, withoutManaged(writtenPod("p"))), nil, withoutManaged(writtenPod("p")), false},
		{"a list of pods", runtime.ContentTypeProtobuf, encode(t, pb, list), nil, wantList, false},
		{"another kind: decoded whole", runtime.ContentTypeProtobuf, encode(t, pb, job), nil, job, false},
		{"JSON: decoded whole", runtime.ContentTypeJSON, encode(t, js, writtenPod("p")), nil, writtenPod("p"), false},
		{"truncated: the full decoder's error", runtime.ContentTypeProtobuf, truncated, nil, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := decoders[tc.media].Decode(tc.data, nil, tc.into)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("decoded %T, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.into != nil && got != tc.into {
				t.Errorf("decoded into a new object, want into the one given")
			}
			// The serializers set the kind; compare without it.
			got.GetObjectKind().SetGroupVersionKind(tc.want.GetObjectKind().GroupVersionKind())
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("decoded (-want +got):\n%s", d)
			}
		})
	}
}

// NewClientset's core group decodes pods without managedFields; the other groups
// are client-go's, and all of them share one rate limiter.
func TestNewClientset(t *testing.T) {
	pb := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	pod := writtenPod("p")
	pod.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	job := &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: metav1.ObjectMeta{Name: "work", Namespace: "ns", ManagedFields: pod.ManagedFields}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", runtime.ContentTypeProtobuf)
		switch r.URL.Path {
		case "/api/v1/namespaces/ns/pods/p":
			_, _ = w.Write(encode(t, pb, pod))
		case "/apis/batch/v1/namespaces/ns/jobs/work":
			_, _ = w.Write(encode(t, pb, job))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	cs, err := clientgo.NewClientset(&rest.Config{Host: srv.URL, QPS: 100, Burst: 200,
		ContentConfig: rest.ContentConfig{ContentType: runtime.ContentTypeProtobuf, AcceptContentTypes: runtime.ContentTypeProtobuf}})
	if err != nil {
		t.Fatal(err)
	}
	gotPod, err := cs.CoreV1().Pods("ns").Get(t.Context(), "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if gotPod.ManagedFields != nil || gotPod.Name != "p" || gotPod.Status.Phase != corev1.PodSucceeded {
		t.Errorf("pod %s phase %s with %d managedFields, want p, Succeeded, none", gotPod.Name, gotPod.Status.Phase, len(gotPod.ManagedFields))
	}
	gotJob, err := cs.BatchV1().Jobs("ns").Get(t.Context(), "work", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(gotJob.ManagedFields) != 2 {
		t.Errorf("job with %d managedFields, want 2: other kinds are decoded whole", len(gotJob.ManagedFields))
	}
	core, batch := cs.CoreV1().RESTClient().GetRateLimiter(), cs.BatchV1().RESTClient().GetRateLimiter()
	if core == nil || core != batch {
		t.Errorf("rate limiters %p and %p, want one shared", core, batch)
	}
	if _, err := clientgo.NewClientset(&rest.Config{Host: srv.URL, QPS: 5}); err == nil {
		t.Error("QPS without burst accepted")
	}
}

func BenchmarkDecodePod(b *testing.B) {
	pb := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	data := encode(b, pb, writtenPod("p"))
	var stripped runtime.Decoder
	for _, info := range clientgo.PodsWithoutManagedFields(scheme.Codecs.WithoutConversion()).SupportedMediaTypes() {
		if info.MediaType == runtime.ContentTypeProtobuf {
			stripped = info.Serializer
		}
	}
	for _, bc := range []struct {
		name string
		dec  runtime.Decoder
	}{{"client-go", pb}, {"without-managedFields", stripped}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, _, err := bc.dec.Decode(data, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A pod in protobuf, as the API server sends it to a client asking for
// application/vnd.kubernetes.protobuf, decoded without its managedFields.
func ExamplePodsWithoutManagedFields() {
	codecs := clientgo.PodsWithoutManagedFields(scheme.Codecs.WithoutConversion())
	info, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "work-1", Finalizers: []string{batchv1.JobTrackingFinalizer},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"}}},
		Status: corev1.PodStatus{Phase: corev1.PodSucceeded},
	}
	data, _ := runtime.Encode(protobuf.NewSerializer(scheme.Scheme, scheme.Scheme), pod)
	obj, _, err := info.Serializer.Decode(data, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	got := obj.(*corev1.Pod)
	fmt.Println(got.Name, got.Status.Phase, got.Finalizers, len(got.ManagedFields))
	// Output: work-1 Succeeded [batch.kubernetes.io/job-tracking] 0
}

// Any input: the decoder without managedFields never panics, and whatever it
// decodes, client-go's decoder decodes to the same object but for managedFields.
func FuzzPodsWithoutManagedFields(f *testing.F) {
	pb := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	f.Add(encode(f, pb, writtenPod("p")))
	f.Add(encode(f, pb, &corev1.PodList{Items: []corev1.Pod{*writtenPod("a"), *writtenPod("b")}}))
	f.Add(encode(f, pb, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j"}}))
	info, _ := runtime.SerializerInfoForMediaType(clientgo.PodsWithoutManagedFields(scheme.Codecs.WithoutConversion()).SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	f.Fuzz(func(t *testing.T, data []byte) {
		got, _, err := info.Serializer.Decode(data, nil, nil)
		if err != nil {
			return
		}
		want, _, err := pb.Decode(data, nil, nil)
		if err != nil {
			t.Fatalf("decoded %T where client-go's decoder fails: %v", got, err)
		}
		switch w := want.(type) {
		case *corev1.Pod:
			w.ManagedFields = nil
		case *corev1.PodList:
			for i := range w.Items {
				w.Items[i].ManagedFields = nil
			}
		}
		got.GetObjectKind().SetGroupVersionKind(want.GetObjectKind().GroupVersionKind())
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("decoded differently (-client-go +here):\n%s", d)
		}
	})
}
