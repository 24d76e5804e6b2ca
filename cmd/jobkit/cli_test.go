package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jobkit/jobkit/owner"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

const (
	now            = "--now=2026-03-01T10:05:00Z"
	ownerKind      = "--owner-kind=ml.examples.jobkit.dev/v1alpha1/TrainingJob"
	ownerFinalizer = "--owner-finalizer=ml.examples.jobkit.dev/worker-tracking"
)

// TestGolden runs `jobkit explain` on the YAML fixtures of testdata and compares
// its output with testdata/golden/NAME.txt (go test -update rewrites them).
func TestGolden(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		// Every pod class, adoption, release, strays, duplicates, the uncounted
		// ledger; the Job and its pods in two files, the pods as a List.
		{name: "classes", args: []string{"-f", "testdata/indexed-job.yaml", "-f", "testdata/indexed-pods.yaml", now}},
		{name: "backoff", args: []string{"-f", "testdata/backoff.yaml", now}},
		{name: "backoff-flags", args: []string{"-f", "testdata/backoff.yaml", now, "--backoff-base=1s", "--backoff-max=1m"}},
		{name: "per-index-backoff", args: []string{"-f", "testdata/per-index.yaml", now}},
		{name: "managed-by-other", args: []string{"-f", "testdata/backoff.yaml", now, "--managed-by=example.com/batch"}},
		{name: "expectations", args: []string{"-f", "testdata/backoff.yaml", now, "--backoff-base=1s", "--unsatisfied-expectations"}},
		{name: "suspended", args: []string{"-f", "testdata/suspended.yaml", now}},
		{name: "finishing", args: []string{"-f", "testdata/finishing.yaml", now}},
		{name: "finished-finalizers", args: []string{"-f", "testdata/finished.yaml", now}},
		{name: "deleting", args: []string{"-f", "testdata/deleting.yaml", now}},
		{name: "invalid", args: []string{"-f", "testdata/invalid.yaml", now}},
		{name: "name-and-namespace", args: []string{"work", "-n", "batch", "-f", "testdata/indexed-job.yaml", "-f", "testdata/backoff.yaml", "-f", "testdata/indexed-pods.yaml", now}},
		{name: "assume-fail-index", args: []string{"-f", "testdata/per-index.yaml", now, "--assume", "index=1:fail:exit=42"}},
		{name: "assume-oldest-succeed", args: []string{"-f", "testdata/per-index.yaml", now, "--assume", "oldest=2:succeed"}},
		{name: "steps", args: []string{"-f", "testdata/backoff.yaml", now, "--steps", "8"}},
		{name: "steps-fail", args: []string{"-f", "testdata/per-index.yaml", now, "--steps", "4", "--kubelet", "fail=7", "--step-duration", "20s"}},
		{name: "steps-assume-json", args: []string{"-f", "testdata/per-index.yaml", now, "--assume", "all:succeed", "--steps", "2", "--kubelet", "idle", "-o", "json"}},
		{name: "json", args: []string{"-f", "testdata/per-index.yaml", now, "-o", "json"}},
		{name: "yaml", args: []string{"-f", "testdata/backoff.yaml", now, "-o", "yaml"}},
		// A custom resource: its pods by its controller reference and finalizer, a
		// batch/v1 Job's pod ignored, an earlier owner's pod diagnosed.
		{name: "owner-kind", args: []string{"-f", "testdata/trainingjob.yaml", now, ownerKind, ownerFinalizer}},
		{name: "owner-kind-json", args: []string{"resnet", "-n", "default", "-f", "testdata/trainingjob.yaml", now, ownerKind, ownerFinalizer, "-o", "json"}},
		// A TrainingJob in its own field names (workers, backoff, a success policy
		// of its own shape), read through its mapping file.
		{name: "mapping", args: []string{"-f", "testdata/trainingjob-api.yaml", now, "--mapping", "testdata/trainingjob.mapping.yaml"}},
		// The same through --map flags, which add to the file's and win over it.
		{name: "mapping-flags", args: []string{"-f", "testdata/trainingjob-api.yaml", now, "--mapping", "testdata/trainingjob.mapping.yaml", "--map", "spec.parallelism==2", "--map", "backoff.base==1m"}},
		// Parallelism 1 is taken: the waiting index is not what blocks, and no
		// requeue is due for it.
		{name: "mapping-parallelism", args: []string{"-f", "testdata/trainingjob-api.yaml", now, "--mapping", "testdata/trainingjob.mapping.yaml", "--map", "spec.parallelism==1"}},
		// Its what-if run keeps the TrainingJob's own backoff (spec.backoff.initial
		// 20s): index 2, failed at 10:04:55, still waits at 10:05:10, where the
		// default 10s would have retried it.
		{name: "mapping-steps", args: []string{"-f", "testdata/trainingjob-api.yaml", now, "--mapping", "testdata/trainingjob.mapping.yaml", "--steps", "3", "--kubelet", "idle", "--step-duration", "10s"}},
		// Its what-if run: the same syncs as a batch/v1 Job's, the status writes
		// naming the kind.
		{name: "owner-kind-steps", args: []string{"-f", "testdata/trainingjob.yaml", now, ownerKind, ownerFinalizer, "--steps", "10"}},
		// The batch/v1 Job of the same file, with the default kind named.
		{name: "owner-kind-batch-job", args: []string{"-f", "testdata/trainingjob.yaml", now, "--owner-kind", "batch/v1/Job"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"explain"}, tt.args...), &stdout, &stderr)
			if code != exitOK {
				t.Fatalf("run(%q) = %d, want 0; stderr:\n%s", tt.args, code, stderr.String())
			}
			golden := filepath.Join("testdata", "golden", tt.name+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, stdout.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to write it)", err)
			}
			if diff := cmp.Diff(string(want), stdout.String()); diff != "" {
				t.Errorf("output of %q differs from %s (-want +got):\n%s", tt.args, golden, diff)
			}
		})
	}
}

// TestErrors checks that bad input gets a clear message and a non-zero exit code.
func TestErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unparsable := write("bad.yaml", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: [unclosed\n")
	noKind := write("nokind.yaml", "metadata: {name: x}\n")
	podsOnly := write("pods.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n")
	badSpec := write("badspec.yaml", "apiVersion: ml.examples.jobkit.dev/v1alpha1\nkind: TrainingJob\nmetadata: {name: r, namespace: default}\nspec: {completions: three, parallelism: 1}\n")
	badTemplate := write("badtemplate.yaml", "apiVersion: ml.examples.jobkit.dev/v1alpha1\nkind: TrainingJob\nmetadata: {name: r, namespace: default}\nspec: {template: {spec: {containers: {name: x}}}}\n")
	badStatus := write("badstatus.yaml", "apiVersion: ml.examples.jobkit.dev/v1alpha1\nkind: TrainingJob\nmetadata: {name: r, namespace: default}\nstatus: {startTime: yesterday}\n")
	negativeStatus := write("negative.yaml", "apiVersion: ml.examples.jobkit.dev/v1alpha1\nkind: TrainingJob\nmetadata: {name: r, namespace: default}\nspec: {completions: 1, parallelism: 1, template: {spec: {restartPolicy: Never, containers: [{name: w, image: x}]}}}\nstatus: {succeeded: -1}\n")
	badWorkers := write("badworkers.yaml", "apiVersion: ml.examples.jobkit.dev/v1alpha1\nkind: TrainingJob\nmetadata: {name: r, namespace: default}\nspec: {workers: three}\n")
	widget := write("widget.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\n")
	kubeconfig := write("kubeconfig", "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n")
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{name: "no subcommand", args: nil, wantCode: exitUsage, wantStderr: "want a subcommand: explain"},
		{name: "unknown flag", args: []string{"explain", "--nope"}, wantCode: exitUsage, wantStderr: "flag provided but not defined: -nope"},
		{name: "no input", args: []string{"explain"}, wantCode: exitError, wantStderr: "want a Job: a NAME (read from the cluster) or -f FILE"},
		{name: "two names", args: []string{"explain", "a", "b", "-f", "x"}, wantCode: exitUsage, wantStderr: `want at most one Job name, got ["a" "b"]`},
		{name: "bad output", args: []string{"explain", "-f", "testdata/backoff.yaml", "-o", "xml"}, wantCode: exitUsage, wantStderr: `-o: unknown output "xml"`},
		{name: "bad now", args: []string{"explain", "-f", "testdata/backoff.yaml", "--now", "yesterday"}, wantCode: exitUsage, wantStderr: `--now: "yesterday" is not an RFC 3339 time`},
		{name: "bad backoff", args: []string{"explain", "-f", "testdata/backoff.yaml", "--backoff-base=0s"}, wantCode: exitUsage, wantStderr: "--backoff-base and --backoff-max must be positive"},
		{name: "bad assume", args: []string{"explain", "-f", "testdata/backoff.yaml", "--assume", "index=x:fail"}, wantCode: exitUsage, wantStderr: `bad --assume "index=x:fail": selector index needs a number`},
		{name: "assume matches nothing", args: []string{"explain", "-f", "testdata/backoff.yaml", now, "--assume", "oldest=1:succeed"}, wantCode: exitError, wantStderr: `bad --assume "oldest=1:succeed": no active pod of the Job matches`},
		{name: "bad kubelet", args: []string{"explain", "-f", "testdata/backoff.yaml", "--steps", "1", "--kubelet", "fail=x"}, wantCode: exitUsage, wantStderr: `--kubelet: fail=CODE needs a non-zero exit code, got "x"`},
		{name: "unknown kubelet", args: []string{"explain", "-f", "testdata/backoff.yaml", "--steps", "1", "--kubelet", "crash"}, wantCode: exitError, wantStderr: `--steps: kubelet: unknown behaviour "crash" (want succeed, fail or idle)`},
		{name: "negative steps", args: []string{"explain", "-f", "testdata/backoff.yaml", "--steps", "-1"}, wantCode: exitUsage, wantStderr: "--steps: must not be negative, got -1"},
		{name: "missing file", args: []string{"explain", "-f", filepath.Join(dir, "missing.yaml")}, wantCode: exitError, wantStderr: "missing.yaml: no such file or directory"},
		{name: "unparsable yaml", args: []string{"explain", "-f", unparsable}, wantCode: exitError, wantStderr: "bad.yaml: line 4 (document 1): did not find expected ',' or ']'"},
		{name: "not an object", args: []string{"explain", "-f", noKind}, wantCode: exitError, wantStderr: "nokind.yaml: document 1: not a Kubernetes object: no kind"},
		{name: "no job in files", args: []string{"explain", "-f", podsOnly}, wantCode: exitError, wantStderr: "no job: the input holds no batch/v1 Job (1 pod(s))"},
		{name: "job not in files", args: []string{"explain", "nothere", "-f", "testdata/backoff.yaml"}, wantCode: exitError, wantStderr: `no job: job "nothere" not found in the input (it holds default/retry)`},
		{name: "two jobs in files", args: []string{"explain", "-f", "testdata/backoff.yaml", "-f", "testdata/suspended.yaml"}, wantCode: exitError, wantStderr: "the input holds 2 Jobs (default/retry, default/later): name one"},
		{name: "no cluster in kubeconfig", args: []string{"explain", "work", "--kubeconfig", kubeconfig}, wantCode: exitError, wantStderr: "kubeconfig: invalid configuration: no configuration has been provided"},
		{name: "no owner", args: []string{"explain", ownerKind, ownerFinalizer}, wantCode: exitError, wantStderr: "want a TrainingJob: a NAME (read from the cluster) or -f FILE"},
		{name: "owner kind without version", args: []string{"explain", "-f", "testdata/trainingjob.yaml", "--owner-kind", "TrainingJob"}, wantCode: exitUsage, wantStderr: `--owner-kind: "TrainingJob" is not GROUP/VERSION/KIND`},
		{name: "owner kind with a bad group", args: []string{"explain", "-f", "testdata/trainingjob.yaml", "--owner-kind", "ML_Examples/v1/TrainingJob", ownerFinalizer}, wantCode: exitUsage, wantStderr: `--owner-kind: "ML_Examples/v1/TrainingJob": invalid owner kind: Group "ML_Examples"`},
		{name: "owner kind with an empty kind", args: []string{"explain", "-f", "testdata/trainingjob.yaml", "--owner-kind", "ml.examples.jobkit.dev/v1/", ownerFinalizer}, wantCode: exitUsage, wantStderr: `--owner-kind: "ml.examples.jobkit.dev/v1/": invalid owner kind: Kind "": required`},
		{name: "batch Job of another version", args: []string{"explain", "-f", "testdata/backoff.yaml", "--owner-kind", "batch/v2/Job"}, wantCode: exitUsage, wantStderr: `--owner-kind: "batch/v2/Job": batch Jobs are read as batch/v1`},
		{name: "batch Job with another finalizer", args: []string{"explain", "-f", "testdata/backoff.yaml", "--owner-finalizer", "example.com/mine"}, wantCode: exitUsage, wantStderr: `--owner-finalizer: "example.com/mine": batch/v1 Jobs are tracked by batch.kubernetes.io/job-tracking`},
		{name: "owner kind without finalizer", args: []string{"explain", "-f", "testdata/trainingjob.yaml", ownerKind}, wantCode: exitUsage, wantStderr: "--owner-finalizer: required with --owner-kind ml.examples.jobkit.dev/v1alpha1/TrainingJob"},
		{name: "unqualified finalizer", args: []string{"explain", "-f", "testdata/trainingjob.yaml", ownerKind, "--owner-finalizer", "worker-tracking"}, wantCode: exitUsage, wantStderr: `--owner-finalizer: "worker-tracking": invalid owner kind: Finalizer "worker-tracking": must be qualified with a domain`},
		{name: "steps with an owner kind and an unknown kubelet", args: []string{"explain", "-f", "testdata/trainingjob.yaml", ownerKind, ownerFinalizer, "--steps", "2", "--kubelet", "crash"}, wantCode: exitError, wantStderr: `--steps: kubelet: unknown behaviour "crash" (want succeed, fail or idle)`},
		{name: "steps of an owner whose status the API refuses", args: []string{"explain", "-f", negativeStatus, now, ownerKind, ownerFinalizer, "--steps", "2"}, wantCode: exitError, wantStderr: `--steps: loading the state into the in-memory cluster: the TrainingJob's status: TrainingJob.ml.examples.jobkit.dev "r" is invalid: [status.succeeded: Invalid value: -1: must be greater than or equal to 0`},
		{name: "no document of the owner kind", args: []string{"explain", "-f", "testdata/backoff.yaml", ownerKind, ownerFinalizer}, wantCode: exitError, wantStderr: "no job: the input holds no TrainingJob.ml.examples.jobkit.dev (2 pod(s), 1 batch/v1 Job(s))"},
		{name: "owner not in files", args: []string{"explain", "bert", "-f", "testdata/trainingjob.yaml", ownerKind, ownerFinalizer}, wantCode: exitError, wantStderr: `no job: TrainingJob.ml.examples.jobkit.dev "bert" not found in the input (it holds default/resnet)`},
		{name: "two owners in files", args: []string{"explain", "-f", "testdata/trainingjob.yaml", "-f", badSpec, ownerKind, ownerFinalizer}, wantCode: exitError, wantStderr: "the input holds 2 objects of kind TrainingJob.ml.examples.jobkit.dev (default/resnet, default/r): name one"},
		{name: "owner spec field of a wrong type", args: []string{"explain", "-f", badSpec, ownerKind, ownerFinalizer}, wantCode: exitError, wantStderr: `TrainingJob default/r: bad owner object: spec.completions: want int32, got string ("three")`},
		{name: "owner template of a wrong type", args: []string{"explain", "-f", badTemplate, ownerKind, ownerFinalizer}, wantCode: exitError, wantStderr: `TrainingJob default/r: bad owner object: spec.template.spec.containers: want []v1.Container, got object`},
		{name: "owner status field of a wrong type", args: []string{"explain", "-f", badStatus, ownerKind, ownerFinalizer}, wantCode: exitError, wantStderr: `TrainingJob default/r: bad owner object: status.startTime: "yesterday": `},
		{name: "map without owner kind", args: []string{"explain", "-f", "testdata/backoff.yaml", "--map", "spec.completions=spec.workers"}, wantCode: exitUsage, wantStderr: "--map and --mapping read an owner of another kind: give its --owner-kind"},
		{name: "map not an assignment", args: []string{"explain", "-f", "testdata/trainingjob-api.yaml", ownerKind, ownerFinalizer, "--map", "spec.completions"}, wantCode: exitUsage, wantStderr: `--map: "spec.completions" is not JOBFIELD=FIELD`},
		{name: "map of an unknown target", args: []string{"explain", "-f", "testdata/trainingjob-api.yaml", ownerKind, ownerFinalizer, "--map", "spec.workers=spec.workers"}, wantCode: exitUsage, wantStderr: `--map: bad field mapping: target "spec.workers": not a field of a batch/v1 Job`},
		{name: "missing mapping file", args: []string{"explain", "-f", "testdata/trainingjob-api.yaml", "--mapping", filepath.Join(dir, "missing.yaml")}, wantCode: exitUsage, wantStderr: "--mapping: open " + filepath.Join(dir, "missing.yaml")},
		{name: "mapped field of a wrong type", args: []string{"explain", "-f", badWorkers, "--mapping", "testdata/trainingjob.mapping.yaml"}, wantCode: exitError, wantStderr: `TrainingJob default/r: bad owner object: spec.workers (read as spec.completions): want int32, got string ("three")`},
		{name: "a lone object of an unknown kind", args: []string{"explain", "-f", widget}, wantCode: exitError, wantStderr: "no job: the input holds no batch/v1 Job (0 pod(s); it read and ignored 1 example.com/v1 Widget (to explain an owner of such a kind: --owner-kind example.com/v1/Widget --owner-finalizer NAME, with --mapping FILE when its fields are not named as a Job's))"},
		{name: "an unknown kind beside the owner kind", args: []string{"explain", "-f", widget, ownerKind, ownerFinalizer}, wantCode: exitError, wantStderr: "no job: the input holds no TrainingJob.ml.examples.jobkit.dev (0 pod(s), 0 batch/v1 Job(s); it read and ignored 1 example.com/v1 Widget)"},
		{name: "unknown context", args: []string{"explain", "work", "--kubeconfig", kubeconfig, "--context", "nope"}, wantCode: exitError, wantStderr: "kubeconfig: invalid configuration: [context was not found for specified context: nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("run(%q) = %d, want %d; stderr:\n%s", tt.args, code, tt.wantCode, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("run(%q) stderr = %q, want it to contain %q", tt.args, stderr.String(), tt.wantStderr)
			}
			if code != exitOK && stdout.Len() > 0 {
				t.Errorf("run(%q) failed but wrote to stdout: %q", tt.args, stdout.String())
			}
		})
	}
}

// TestIgnoredKinds checks that the kinds read and ignored beside the owner are
// named on stderr, and nothing is said when there are none.
func TestIgnoredKinds(t *testing.T) {
	widgets := filepath.Join(t.TempDir(), "widgets.yaml")
	if err := os.WriteFile(widgets, []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: example.com/v1, kind: Widget, metadata: {name: v}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{name: "beside a Job", args: []string{"-f", widgets, "-f", "testdata/backoff.yaml"},
			wantStderr: "jobkit explain: note: the input read and ignored 2 example.com/v1 Widget, 1 v1 ConfigMap (to explain an owner of such a kind: --owner-kind example.com/v1/Widget --owner-finalizer NAME, with --mapping FILE when its fields are not named as a Job's)\n"},
		{name: "a TrainingJob beside a Job", args: []string{"-f", "testdata/trainingjob.yaml"},
			wantStderr: "jobkit explain: note: the input read and ignored 1 ml.examples.jobkit.dev/v1alpha1 TrainingJob (to explain an owner of such a kind: --owner-kind ml.examples.jobkit.dev/v1alpha1/TrainingJob --owner-finalizer NAME, with --mapping FILE when its fields are not named as a Job's)\n"},
		{name: "nothing ignored", args: []string{"-f", "testdata/backoff.yaml"}, wantStderr: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), append([]string{"explain", now}, tt.args...), &stdout, &stderr); code != exitOK {
				t.Fatalf("run(%q) = %d, want 0; stderr:\n%s", tt.args, code, stderr.String())
			}
			if got := stderr.String(); got != tt.wantStderr {
				t.Errorf("run(%q) stderr = %q, want %q", tt.args, got, tt.wantStderr)
			}
		})
	}
}

func TestParseOwnerKind(t *testing.T) {
	tests := []struct {
		name, kind, finalizer string
		want                  owner.Kind
		wantErr               string
	}{
		{name: "the default", kind: "batch/v1/Job", want: owner.Kind{}},
		{name: "batch/v1 Job with its own finalizer", kind: "batch/v1/Job", finalizer: "batch.kubernetes.io/job-tracking", want: owner.Kind{}},
		{name: "custom resource", kind: "ml.example.com/v1alpha1/TrainingJob", finalizer: "ml.example.com/worker-tracking",
			want: owner.Kind{Group: "ml.example.com", Version: "v1alpha1", Kind: "TrainingJob", Finalizer: "ml.example.com/worker-tracking"}},
		{name: "core group", kind: "v1/ReplicationController", finalizer: "example.com/rc-tracking",
			want: owner.Kind{Version: "v1", Kind: "ReplicationController", Finalizer: "example.com/rc-tracking"}},
		{name: "too many parts", kind: "a/b/c/d", wantErr: `--owner-kind: "a/b/c/d" is not GROUP/VERSION/KIND`},
		{name: "empty version", kind: "ml.example.com//TrainingJob", finalizer: "ml.example.com/w", wantErr: `--owner-kind: "ml.example.com//TrainingJob": invalid owner kind: Version "": required`},
		{name: "finalizer with an empty name", kind: "ml.example.com/v1/TrainingJob", finalizer: "ml.example.com/", wantErr: `--owner-finalizer: "ml.example.com/": invalid owner kind: Finalizer "ml.example.com/": name part must be 1 to 63 characters without '/'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseOwnerKind(tt.kind, tt.finalizer)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("parseOwnerKind(%q, %q) error = %v, want %q", tt.kind, tt.finalizer, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("parseOwnerKind(%q, %q) = %+v, %v, want %+v", tt.kind, tt.finalizer, got, err, tt.want)
			}
		})
	}
}

// TestPluginName checks that the command installed as the kubectl plugin
// kubectl-jobkit (`kubectl jobkit explain ...` runs it with the same arguments)
// behaves as jobkit: the same output and exit code, its messages naming it as
// kubectl users type it.
func TestPluginName(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantSelf string
	}{
		{name: "explain", args: []string{"explain", "-f", "testdata/per-index.yaml", now}, wantCode: exitOK},
		{name: "json", args: []string{"explain", "-f", "testdata/per-index.yaml", now, "-o", "json"}, wantCode: exitOK},
		{name: "an error", args: []string{"explain", "nothere", "-f", "testdata/backoff.yaml"}, wantCode: exitError, wantSelf: "kubectl jobkit explain: no job"},
		{name: "help", args: []string{"explain", "-h"}, wantCode: exitOK, wantSelf: "  kubectl jobkit explain -f FILE"},
		{name: "no subcommand", args: nil, wantCode: exitUsage, wantSelf: "kubectl jobkit: want a subcommand: explain"},
		{name: "--help without a subcommand", args: []string{"--help"}, wantCode: exitOK, wantSelf: "  kubectl jobkit explain -f FILE"},
		{name: "-h without a subcommand", args: []string{"-h"}, wantCode: exitOK, wantSelf: "  kubectl jobkit explain NAME"},
		{name: "help", args: []string{"help"}, wantCode: exitOK, wantSelf: "  kubectl jobkit explain -f FILE"},
		{name: "an unknown subcommand", args: []string{"describe"}, wantCode: exitUsage, wantSelf: "kubectl jobkit: want a subcommand: explain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), tt.args, &out, &errOut)
			for _, program := range []string{"kubectl-jobkit", "/usr/local/bin/kubectl-jobkit", `C:\bin\kubectl-jobkit.exe`} {
				var pout, perr bytes.Buffer
				pcode := runAs(context.Background(), program, tt.args, &pout, &perr)
				if pcode != tt.wantCode || code != tt.wantCode {
					t.Errorf("exit codes: jobkit %d, %s %d, want %d", code, program, pcode, tt.wantCode)
				}
				if diff := cmp.Diff(out.String(), pout.String()); diff != "" {
					t.Errorf("%s: stdout differs from jobkit's (-jobkit +plugin):\n%s", program, diff)
				}
				unname := func(s string) string { return strings.ReplaceAll(s, "kubectl jobkit", "jobkit") }
				if diff := cmp.Diff(unname(errOut.String()), unname(perr.String())); diff != "" {
					t.Errorf("%s: stderr differs from jobkit's beyond its name (-jobkit +plugin):\n%s", program, diff)
				}
				if !strings.Contains(perr.String(), tt.wantSelf) {
					t.Errorf("%s: stderr = %q, want it to contain %q", program, perr.String(), tt.wantSelf)
				}
			}
		})
	}
}
