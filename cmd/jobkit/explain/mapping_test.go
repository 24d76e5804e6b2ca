package explain_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/jobkit/jobkit/cmd/jobkit/explain"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/plan"
)

// trainingJob is a TrainingJob in its own field names
// (examples/trainingjob/api/v1alpha1).
const trainingJob = `
apiVersion: ml.examples.jobkit.dev/v1alpha1
kind: TrainingJob
metadata: {name: resnet, namespace: default, uid: u1}
spec:
  workers: 8
  backoffLimitPerIndex: 3
  maxFailedIndexes: 2
  backoff: {initial: 30s, max: 5m}
  successPolicy: {succeededCount: 6}
  template: {spec: {restartPolicy: Never, containers: [{name: trainer, image: busybox}]}}
status: {active: 4, failed: 1}
`

func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	j, err := yaml.YAMLToJSON([]byte(doc))
	require.NoError(t, err)
	require.NoError(t, u.UnmarshalJSON(j))
	return u
}

func trainingMapping(t *testing.T) explain.Mapping {
	t.Helper()
	data, err := os.ReadFile("../testdata/trainingjob.mapping.yaml")
	require.NoError(t, err)
	f, err := explain.ParseMappingFile("trainingjob.mapping.yaml", data)
	require.NoError(t, err)
	require.Equal(t, "ml.examples.jobkit.dev/v1alpha1/TrainingJob", f.OwnerKind)
	require.Equal(t, "ml.examples.jobkit.dev/worker-tracking", f.OwnerFinalizer)
	return f.Fields
}

func TestWorkloadOfWithAMapping(t *testing.T) {
	tj := trainingMapping(t)
	tests := []struct {
		name        string
		doc         string
		mapping     explain.Mapping
		wantSpec    plan.Spec
		wantBackoff plainbackoff.Policy
		wantStatus  batchv1.JobStatus
	}{
		{
			// Without a mapping, workers is not completions: the resource is read
			// as a Job of one completion.
			name:       "trainingjob by the default mapping",
			doc:        trainingJob,
			wantSpec:   plan.Spec{BackoffLimitPerIndex: ptr.To[int32](3), MaxFailedIndexes: ptr.To[int32](2), SuccessPolicy: &batchv1.SuccessPolicy{}},
			wantStatus: batchv1.JobStatus{Active: 4, Failed: 1},
		},
		{
			name:    "trainingjob by its mapping file",
			doc:     trainingJob,
			mapping: tj,
			wantSpec: plan.Spec{
				Completions: ptr.To[int32](8), Parallelism: ptr.To[int32](8),
				CompletionMode:       ptr.To(batchv1.IndexedCompletion),
				BackoffLimitPerIndex: ptr.To[int32](3), MaxFailedIndexes: ptr.To[int32](2),
				PodReplacementPolicy: ptr.To(batchv1.Failed),
				SuccessPolicy:        &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To[int32](6)}}},
			},
			wantBackoff: plainbackoff.Policy{Base: 30 * time.Second, Max: 5 * time.Minute},
			wantStatus:  batchv1.JobStatus{Active: 4, Failed: 1},
		},
		{
			name: "alternatives and literals take over when a field is unset",
			doc: `
apiVersion: ml.examples.jobkit.dev/v1alpha1
kind: TrainingJob
metadata: {name: small, namespace: default}
spec: {workers: 2, parallelism: 1}
`,
			mapping: tj,
			wantSpec: plan.Spec{
				Completions: ptr.To[int32](2), Parallelism: ptr.To[int32](1),
				CompletionMode:       ptr.To(batchv1.IndexedCompletion),
				BackoffLimitPerIndex: ptr.To[int32](0),
				PodReplacementPolicy: ptr.To(batchv1.Failed),
			},
			wantBackoff: plainbackoff.Policy{Base: 10 * time.Second, Max: 6 * time.Minute},
		},
		{
			name: "the status from elsewhere, a field left out",
			doc: `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: default}
spec: {size: 3, completions: 9, state: {job: {succeeded: 2}}}
`,
			mapping:    explain.Mapping{"spec.completions": "", "spec.parallelism": "spec.size", "status": "spec.state.job"},
			wantSpec:   plan.Spec{Parallelism: ptr.To[int32](3)},
			wantStatus: batchv1.JobStatus{Succeeded: 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := object(t, tt.doc)
			before := obj.DeepCopy()
			w, err := explain.WorkloadOf(obj, tt.mapping)
			require.NoError(t, err)
			w.Spec.Template = nil
			if diff := cmp.Diff(tt.wantSpec, w.Spec); diff != "" {
				t.Errorf("WorkloadOf spec (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantStatus, w.Status); diff != "" {
				t.Errorf("WorkloadOf status (-want +got):\n%s", diff)
			}
			require.Equal(t, tt.wantBackoff, w.Backoff)
			require.Equal(t, before, obj, "WorkloadOf modified the object")
		})
	}
}

func TestWorkloadOfWithAMappingErrors(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		mapping explain.Mapping
		wantErr error
		want    string
	}{
		{
			name:    "a mapped field of a wrong type names both fields and the value",
			doc:     "apiVersion: x.io/v1\nkind: Run\nmetadata: {name: r, namespace: d}\nspec: {workers: eight}\n",
			mapping: explain.Mapping{"spec.completions": "spec.workers"},
			wantErr: explain.ErrBadOwner,
			want:    `Run d/r: bad owner object: spec.workers (read as spec.completions): want int32, got string ("eight")`,
		},
		{
			name:    "a field inside a mapped field",
			doc:     "apiVersion: x.io/v1\nkind: Run\nmetadata: {name: r, namespace: d}\nspec: {pod: {spec: {containers: {name: x}}}}\n",
			mapping: explain.Mapping{"spec.template": "spec.pod"},
			wantErr: explain.ErrBadOwner,
			want:    `spec.pod.spec.containers (read as spec.template.spec.containers): want []v1.Container, got object`,
		},
		{
			name:    "a bad backoff",
			doc:     "apiVersion: x.io/v1\nkind: Run\nmetadata: {name: r, namespace: d}\nspec: {backoff: {initial: soon}}\n",
			mapping: explain.Mapping{"backoff.base": "spec.backoff.initial"},
			wantErr: explain.ErrBadOwner,
			want:    `spec.backoff.initial (read as backoff.base): want a positive duration such as "30s", got "soon"`,
		},
		{
			name:    "a target that is no Job field",
			doc:     trainingJob,
			mapping: explain.Mapping{"spec.workers": "spec.workers"},
			wantErr: explain.ErrBadMapping,
			want:    `bad field mapping: target "spec.workers": not a field of a batch/v1 Job that explain reads`,
		},
		{
			name:    "a source that is no field path",
			doc:     trainingJob,
			mapping: explain.Mapping{"spec.completions": "spec.workers[x]"},
			wantErr: explain.ErrBadMapping,
			want:    `bad field mapping: spec.completions: source "spec.workers[x]": "workers[x]": want KEY or KEY[N] with N a list index`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := explain.WorkloadOf(object(t, tt.doc), tt.mapping)
			require.Error(t, err)
			require.True(t, errors.Is(err, tt.wantErr), "error %v does not wrap %v", err, tt.wantErr)
			require.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestParseMappingFileErrors(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{name: "unknown key", data: "ownerKind: x.io/v1/Run\nfield: {}\n", want: `m.yaml: error unmarshaling JSON: while decoding JSON: json: unknown field "field"`},
		{name: "bad target", data: "fields: {status.active: status.running, spec.size: spec.size}\n", want: `m.yaml: bad field mapping: target "spec.size"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := explain.ParseMappingFile("m.yaml", []byte(tt.data))
			require.ErrorIs(t, err, explain.ErrBadMapping)
			require.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestIgnoredHint(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		wantKinds []string
		wantHint  string
	}{
		{name: "none", in: "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", wantKinds: []string{}, wantHint: ""},
		{
			name:      "a core kind and a custom one",
			in:        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: v}\n",
			wantKinds: []string{"2 example.com/v1 Widget", "1 v1 ConfigMap"},
			wantHint:  "read and ignored 2 example.com/v1 Widget, 1 v1 ConfigMap (to explain an owner of such a kind: --owner-kind example.com/v1/Widget --owner-finalizer NAME, with --mapping FILE when its fields are not named as a Job's)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var objs explain.Objects
			require.NoError(t, explain.ReadObjects("in.yaml", strings.NewReader(tt.in), &objs))
			require.Equal(t, tt.wantKinds, objs.IgnoredKinds())
			require.Equal(t, tt.wantHint, objs.IgnoredHint())
		})
	}
}
