package childjobs_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/childjobs"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// details returns the field and detail of each error at path.
func details(errs field.ErrorList, path string) []string {
	var out []string
	for _, e := range errs {
		if e.Field == path {
			out = append(out, e.Detail)
		}
	}
	return out
}

// plain/group words apimachinery's helpers itself (it imports only the
// standard library): the words must be apimachinery's, for the values JobSet
// checks with them.
func TestValidateWordsAreApimachinerys(t *testing.T) {
	t.Run("subdomain: DNS-1123 subdomain, then DNS-1035 label", func(t *testing.T) {
		for _, v := range []string{"No_Dots", "1net", "a.b", strings.Repeat("s", 64), strings.Repeat("a.", 130) + "a"} {
			in := leaderWorkers(1)
			in.Spec.Subdomain = v
			want := validation.IsDNS1123Subdomain(v)
			for _, m := range validation.IsDNS1035Label(v) {
				if m == validation.MaxLenError(63) {
					m = ".spec.network.subdomain is too long, must be less than 63 characters"
				}
				want = append(want, m)
			}
			assert.Equal(t, want, details(in.Validate(), "spec.network.subdomain"), v)
		}
	})
	t.Run("groupName: DNS-1035 label", func(t *testing.T) {
		for _, v := range []string{"Bad_Group", "9th", "ok"} {
			in := leaderWorkers(1)
			in.Spec.Roles[0].GroupName = v
			assert.Equal(t, validation.IsDNS1035Label(v), details(in.Validate(), "spec.replicatedJobs[0].groupName"), v)
		}
	})
	t.Run("managedBy: IsDomainPrefixedPath, then its length", func(t *testing.T) {
		path := field.NewPath("spec", "managedBy")
		for _, v := range []string{"no-slash", "/x", "Example.com/x", "example.com/a b", "example.com/" + strings.Repeat("a", 60), "example.com/ok"} {
			in := leaderWorkers(1)
			in.Spec.ManagedBy = v
			want := validation.IsDomainPrefixedPath(path, v)
			if len(v) > 63 {
				want = append(want, field.TooLong(path, v, 63))
			}
			var got field.ErrorList
			for _, e := range in.Validate() {
				if e.Field == "spec.managedBy" {
					got = append(got, e)
				}
			}
			assert.Equal(t, want.ToAggregate(), got.ToAggregate(), v)
		}
	})
	t.Run("coordinator label: a label value", func(t *testing.T) {
		in := leaderWorkers(1)
		in.Spec.Coordinator = &plaingroup.Coordinator{ReplicatedJob: "workers"}
		in.Spec.Subdomain = "n" + strings.Repeat("e", 60)
		v := "js-workers-0-0." + in.Spec.Subdomain
		got := details(in.Validate(), "spec.coordinator")
		require.Len(t, got, 1)
		// apimachinery's words for a label value too long (v0.37's
		// content.IsLabelValue; the package is not at the core's floor, v0.34).
		assert.True(t, strings.HasSuffix(got[0], "invalid label value \""+v+"\" for coordinator label \"jobset.sigs.k8s.io/coordinator\" (long JobSet / ReplicatedJob / SubDomain name?): must be no more than 63 bytes"), got[0])
	})
	t.Run("immutable", func(t *testing.T) {
		old := leaderWorkers(1)
		in := leaderWorkers(2)
		assert.Equal(t, []string{apivalidation.FieldImmutableErrorMsg}, details(in.ValidateUpdate(old), "spec.replicatedJobs[1].replicas"))
	})
}

func TestInputValidateJobSetChecks(t *testing.T) {
	in := leaderWorkers(2)
	in.Templates[1].Spec.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
	in.Spec.Coordinator = &plaingroup.Coordinator{ReplicatedJob: "workers"}
	in.Spec.FailurePolicy = &plaingroup.FailurePolicy{RestartStrategy: plaingroup.InPlaceRestart}
	got := in.Validate().ToAggregate().Error()
	for _, want := range []string{
		`spec.replicatedJobs[0].template.spec.backoffLimit: Invalid value: null: replicatedJob leader: must be set to 2147483647 (MaxInt32) when in-place restart is enabled`,
		`spec.replicatedJobs[1].template.spec.podReplacementPolicy: Invalid value: null: replicatedJob workers: must be set to Failed when in-place restart is enabled`,
		`spec.coordinator.replicatedJob: Invalid value: "workers": job for coordinator pod must be indexed completion mode, and completions number must be set`,
	} {
		assert.Contains(t, got, want)
	}
	in = leaderWorkers(2)
	in.Name, in.Spec.GenerateName = "", "train-"
	assert.Empty(t, in.Validate(), "a generateName stands for the name")
}

func TestInputDefault(t *testing.T) {
	in := leaderWorkers(2)
	in.Spec.FailurePolicy = &plaingroup.FailurePolicy{Rules: []plaingroup.Rule{{Action: plaingroup.FailJobSet}}}
	in.Templates[0].Spec.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
	in.Templates[0].Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	in.Templates[1].Spec.Template.Spec.RestartPolicy = ""
	in.Default()
	assert.Equal(t, "default", in.Spec.Roles[1].GroupName)
	assert.Equal(t, &plaingroup.SuccessPolicy{Operator: plaingroup.All}, in.Spec.SuccessPolicy)
	assert.Equal(t, plaingroup.AnyOrder, in.Spec.StartupOrder)
	assert.Equal(t, plaingroup.Recreate, in.Spec.FailurePolicy.RestartStrategy)
	assert.Equal(t, "failurePolicyRule0", in.Spec.FailurePolicy.Rules[0].Name)
	assert.Empty(t, in.Spec.Subdomain, "the subdomain stays unset, as JobSet leaves it")
	assert.Equal(t, batchv1.NonIndexedCompletion, *in.Templates[0].Spec.CompletionMode, "a set value stays")
	assert.Equal(t, corev1.RestartPolicyNever, in.Templates[0].Spec.Template.Spec.RestartPolicy)
	assert.Equal(t, batchv1.IndexedCompletion, *in.Templates[1].Spec.CompletionMode)
	assert.Equal(t, corev1.RestartPolicyOnFailure, in.Templates[1].Spec.Template.Spec.RestartPolicy)
	assert.True(t, *in.EnableDNSHostnames && *in.PublishNotReadyAddresses)
	again := *in
	again.Default()
	assert.Empty(t, cmp.Diff(in, &again), "Default is idempotent")
}

func TestInputValidateUpdate(t *testing.T) {
	cases := []struct {
		name      string
		suspended bool
		mutate    func(*childjobs.Input)
		want      []string
	}{
		{name: "no change", mutate: func(*childjobs.Input) {}},
		{name: "suspend and the TTL may change", mutate: func(in *childjobs.Input) {
			in.Suspend = true
			in.Spec.TTLSecondsAfterFinished = ptr.To[int32](5)
		}},
		{name: "a container's image", mutate: func(in *childjobs.Input) {
			in.Templates[1].Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "x:2"}}
		},
			want: []string{"spec.replicatedJobs[1].template.spec.template.spec.containers: Invalid value: field is immutable"}},
		{name: "backoffLimit", mutate: func(in *childjobs.Input) { in.Templates[0].Spec.BackoffLimit = ptr.To[int32](9) },
			want: []string{"spec.replicatedJobs[0].template.spec.backoffLimit: Invalid value: field is immutable"}},
		{name: "parallelism of a NonIndexed role: reported once", mutate: func(in *childjobs.Input) {
			in.Templates[1].Spec.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
			in.Templates[1].Spec.Parallelism = ptr.To[int32](3)
		}, want: []string{
			"spec.replicatedJobs[1].template.spec.parallelism: Invalid value: 3: field is immutable",
			"spec.replicatedJobs[1].template.spec.completionMode: Invalid value: field is immutable",
		}},
		{name: "parallelism of an Indexed role: elastic, with completions", mutate: func(in *childjobs.Input) { in.Templates[1].Spec.Parallelism = ptr.To[int32](3) },
			want: []string{"spec.replicatedJobs[1].template.spec.completions: Invalid value: 2: completions must be equal to parallelism for Elastic Indexed Jobs"}},
		{name: "nodeSelector of a running group", mutate: func(in *childjobs.Input) {
			in.Templates[0].Spec.Template.Spec.NodeSelector = map[string]string{"pool": "a"}
		}, want: []string{"spec.replicatedJobs[0].template.spec.template.spec.nodeSelector: Invalid value: field is immutable"}},
		{name: "a suspended group's pod labels, annotations, nodeSelector, tolerations and scheduling gates", suspended: true, mutate: func(in *childjobs.Input) {
			p := &in.Templates[0].Spec.Template
			p.Labels, p.Annotations = map[string]string{"q": "1"}, map[string]string{"q": "2"}
			p.Spec.NodeSelector = map[string]string{"pool": "a"}
			p.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "g"}}
		}},
		{name: "a group resumed with a new nodeSelector", suspended: true, mutate: func(in *childjobs.Input) {
			in.Suspend = false
			in.Templates[0].Spec.Template.Spec.NodeSelector = map[string]string{"pool": "a"}
		}},
		{name: "a suspended group's containers", suspended: true, mutate: func(in *childjobs.Input) {
			in.Templates[0].Spec.Template.Spec.Containers = nil
		}, want: []string{"spec.replicatedJobs[0].template.spec.template.spec.containers: Invalid value: field is immutable"}},
		{name: "the network", mutate: func(in *childjobs.Input) { in.EnableDNSHostnames = ptr.To(false) },
			want: []string{"spec.network.enableDNSHostnames: Invalid value: false: Value is immutable"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := leaderWorkers(2)
			old.Suspend = tc.suspended
			in := leaderWorkers(2)
			in.Suspend = tc.suspended
			tc.mutate(in)
			var got []string
			for _, e := range in.ValidateUpdate(old) {
				got = append(got, e.Error())
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
