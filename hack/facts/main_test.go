package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func factByID(t *testing.T, id string) *fact {
	t.Helper()
	for i := range facts {
		if facts[i].id == id {
			return &facts[i]
		}
	}
	t.Fatalf("no fact %q", id)
	return nil
}

// Each fact's shapes: lines (as written in Go, comments included) that compute it
// and must match, and lines that only look alike and must not.
func TestShapes(t *testing.T) {
	tests := []struct {
		id   string
		line string
		want bool
	}{
		{"job-finished", `if c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed {`, true},
		{"job-finished", `return c.Type != batchv1.JobComplete && c.Type != batchv1.JobFailed`, true},
		{"job-finished", `if t != batchv1.JobFailed && t != batchv1.JobComplete {`, true},
		{"job-finished", `case batchv1.JobComplete, batchv1.JobFailed:`, true},
		{"job-finished", `for _, t := range []batchv1.JobConditionType{batchv1.JobComplete, batchv1.JobFailed} {`, true},
		{"job-finished", `if c.Type == batchv1.JobComplete {`, false},
		{"group-finished", `if (c.Type == plaingroup.ConditionCompleted || c.Type == plaingroup.ConditionFailed) && c.Status == metav1.ConditionTrue {`, true},
		{"group-finished", `for _, t := range []string{"Completed", "Failed"} {`, true},
		{"group-finished", `case plaingroup.ConditionCompleted, plaingroup.ConditionFailed:`, true},
		{"group-finished", `if c.Type == plaingroup.ConditionCompleted {`, false},
		{"job-finished", `case batchv1.JobComplete:`, false},
		{"job-finished", `// Complete || Failed: see JobComplete || JobFailed`, false},

		{"pod-terminal", `return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed`, true},
		{"pod-terminal", `if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {`, true},
		{"pod-terminal", `running := p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded`, true},
		{"pod-terminal", `case corev1.PodSucceeded, corev1.PodFailed:`, true},
		{"pod-terminal", `if p != nil && p.Status.Phase != corev1.PodSucceeded && isFailed(p) {`, false},
		{"pod-terminal", `return !onlyFailed && pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodSucceeded`, false},
		{"pod-terminal", `case corev1.PodSucceeded:`, false},

		{"replacement-default", `policy = batchv1.TerminatingOrFailed`, true},
		{"replacement-default", `if *s.PodReplacementPolicy == batchv1.TerminatingOrFailed {`, false},

		{"has-finalizer", `if slices.Contains(pod.Finalizers, batchv1.JobTrackingFinalizer) {`, true},
		{"has-finalizer", `if f == batchv1.JobTrackingFinalizer {`, true},
		{"has-finalizer", `if f != batchv1.JobTrackingFinalizer {`, true},
		{"has-finalizer", `pod.Finalizers = append(pod.Finalizers, batchv1.JobTrackingFinalizer)`, false},

		{"version-order", `v, err := strconv.ParseUint(obj.ResourceVersion, 10, 64)`, true},
		{"version-order", `n, err := strconv.ParseUint(s, 10, 64)`, false},

		{"managed-by", `if job.Spec.ManagedBy == nil {`, true},
		{"managed-by", `return *w.Spec.ManagedBy == controller`, true},
		{"managed-by", `if w.ManagedBy != nil && *w.ManagedBy != in.ControllerName {`, true},
		{"managed-by", `if o.typ.ManagedBy != nil {`, false},

		{"later-failure", `return !FinishTime(a).Before(FinishTime(b))`, true},
		{"later-failure", `if backoff.FinishTime(a).After(backoff.FinishTime(b)) {`, true},
		{"later-failure", `t := FinishTime(a)`, false},

		{"want-active", `return max(0, min(*completions-st.Succeeded, parallelism))`, true},
		{"want-active", `want := min(j.Completions - j.Succeeded, j.Parallelism)`, true},
		{"want-active", `want := min(spec.Parallelism, completions-succeeded)`, true},
		{"want-active", `n := min(len(pods), parallelism)`, false},
		{"want-active", `left := completions - succeeded`, false},

		{"create-error", `is4xx := code >= 400 && code < 500`, true},
		{"create-error", `if st.Code >= http.StatusBadRequest && st.Code < 500 {`, true},
		{"create-error", `case code == http.StatusConflict && st.Reason == metav1.StatusReasonAlreadyExists:`, true},
		{"create-error", `if reason == metav1.StatusReasonAlreadyExists && code == http.StatusConflict {`, true},
		{"create-error", `if err == nil || pod.Name == "" || !apierrors.IsAlreadyExists(err) {`, true},
		{"create-error", `if apierrors.IsAlreadyExists(err) && pod.Name != "" {`, true},
		{"create-error", `case runplan.CreateErrorExists:`, true},
		{"create-error", `case CreateErrorTerminal:`, true},
		{"create-error", `if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {`, false},
		{"create-error", `if v.Class == runplan.CreateErrorTerminal {`, false},
		{"create-error", `if code >= 500 {`, false},
	}
	for _, tc := range tests {
		t.Run(tc.id+": "+tc.line, func(t *testing.T) {
			if got := factByID(t, tc.id).matches(code(tc.line)); got != tc.want {
				t.Errorf("%s matches %q = %v, want %v", tc.id, tc.line, got, tc.want)
			}
		})
	}
	// Every fact has a line that must match.
	for _, f := range facts {
		covered := false
		for _, tc := range tests {
			covered = covered || tc.id == f.id && tc.want
		}
		if !covered {
			t.Errorf("fact %q has no line that must match", f.id)
		}
	}
}

func TestScan(t *testing.T) {
	src := strings.Join([]string{
		"package x",
		"",
		"// p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed",
		"func terminal(p *corev1.Pod) bool {",
		"	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed // the fact",
		"}",
		"func f(w *plan.Workload) bool { return w.Spec.ManagedBy == nil }",
	}, "\n")
	tests := []struct {
		name string
		path string
		want []string
	}{
		{
			name: "outside the homes: each computing line, not the comment",
			path: "x/x.go",
			want: []string{"x/x.go:5 pod-terminal", "x/x.go:7 managed-by"},
		},
		{
			name: "in the home of one fact: only the other",
			path: "internal/podutil/podutil.go",
			want: []string{"internal/podutil/podutil.go:7 managed-by"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := scan(tc.path, strings.NewReader(src))
			if err != nil {
				t.Fatalf("scan: %v", err)
			}
			var got []string
			for _, h := range hits {
				got = append(got, h.path+":"+strconv.Itoa(h.line)+" "+h.fact.id)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scan(%s) (-want +got):\n%s", tc.path, diff)
			}
		})
	}
}
