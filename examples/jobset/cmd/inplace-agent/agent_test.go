package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8sfake "k8s.io/client-go/kubernetes/fake"

	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// The agent's decision on one read of the group, for a pod that reported
// attempt 2.
func TestStep(t *testing.T) {
	at := func(n int32) *int32 { return &n }
	cases := []struct {
		name              string
		previous, current *int32
		wantRestart       bool
		wantLift          bool
	}{
		{name: "nothing set: wait"},
		{name: "the current attempt is an earlier one: wait", current: at(1)},
		{name: "the current attempt is the pod's: lift", current: at(2), wantLift: true},
		{name: "previous below the pod's: lift", previous: at(1), current: at(2), wantLift: true},
		{name: "previous reaches the pod's: restart", previous: at(2), current: at(2), wantRestart: true},
		{name: "previous beyond the pod's: restart", previous: at(3), current: at(2), wantRestart: true},
		{name: "a later current attempt: wait", previous: at(1), current: at(3)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			restart, lift := step(2, tc.previous, tc.current)
			assert.Equal(t, tc.wantRestart, restart, "restart")
			assert.Equal(t, tc.wantLift, lift, "lift")
		})
	}
}

// The flags and their checks.
func TestParse(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "defaults", args: []string{"--namespace", "ns", "--pod", "p", "--owner", "g"}},
		{name: "no owner", args: []string{"--namespace", "ns", "--pod", "p"}, wantErr: "--owner is required (or its environment variable)"},
		{name: "bad resource", args: []string{"--namespace", "ns", "--pod", "p", "--owner", "g", "--owner-resource", "jobsets"},
			wantErr: `--owner-resource "jobsets": want resource.version.group`},
		{name: "bad exit code", args: []string{"--namespace", "ns", "--pod", "p", "--owner", "g", "--restart-exit-code", "0"},
			wantErr: "--restart-exit-code 0: want 1 to 255"},
	}
	t.Setenv("NAMESPACE", "")
	t.Setenv("POD_NAME", "")
	t.Setenv("OWNER_NAME", "")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _, err := parse(tc.args)
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}, cfg.resource)
			assert.Equal(t, []string{"status", "currentInPlaceRestartAttempt"}, cfg.currentField)
			assert.Equal(t, 88, cfg.exitCode)
		})
	}
}

var jobsets = schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}

func group(previous, current any) *unstructured.Unstructured {
	st := map[string]any{}
	if previous != nil {
		st["previousInPlaceRestartAttempt"] = previous
	}
	if current != nil {
		st["currentInPlaceRestartAttempt"] = current
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
		"metadata": map[string]any{"namespace": "ns", "name": "train"},
		"status":   st,
	}}
}

// One agent's life against fake clients: it reports the attempt after the
// group's current one on its pod, holds the barrier (503) until the group's
// current attempt is its own, lifts it (200), and exits with the restart code
// once the group's previous attempt reaches its own.
func TestAgentRun(t *testing.T) {
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{jobsets: "JobSetList"}, group(nil, int64(0)))
	core := k8sfake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "train-workers-0-0"}})
	cfg, _, err := parse([]string{"--namespace", "ns", "--pod", "train-workers-0-0", "--owner", "train"})
	require.NoError(t, err)
	cfg.resync = 20 * time.Millisecond // the fake's watch may start after an update
	owners := dyn.Resource(jobsets).Namespace("ns")
	a := newAgent(cfg, owners, core.CoreV1().Pods("ns"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan int, 1)
	go func() {
		code, err := a.run(ctx)
		assert.NoError(t, err)
		done <- code
	}()
	probe := func() int {
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/barrier-is-lifted", nil))
		return rec.Code
	}
	require.Eventually(t, func() bool {
		p, err := core.CoreV1().Pods("ns").Get(ctx, "train-workers-0-0", metav1.GetOptions{})
		return err == nil && p.Annotations[plaingroup.AnnotationInPlaceRestartAttempt] == "1"
	}, 5*time.Second, 5*time.Millisecond, "the pod reports attempt 1")
	assert.Equal(t, http.StatusServiceUnavailable, probe(), "the barrier holds at current 0")

	update := func(previous, current any) {
		obj, err := owners.Get(ctx, "train", metav1.GetOptions{})
		require.NoError(t, err)
		obj.Object["status"] = group(previous, current).Object["status"]
		_, err = owners.Update(ctx, obj, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	update(int64(0), int64(1))
	require.Eventually(t, func() bool { return probe() == http.StatusOK }, 5*time.Second, 5*time.Millisecond, "the barrier lifts at current 1")
	update(int64(1), int64(1))
	select {
	case code := <-done:
		assert.Equal(t, 88, code, "the restart exit code")
	case <-ctx.Done():
		t.Fatal("the agent did not exit when previous reached its attempt")
	}
	rec := httptest.NewRecorder()
	a.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/other", nil))
	assert.Equal(t, http.StatusNotFound, rec.Code)
}

// A group deleted under the agent is an error: exit code 1, and the pod fails.
func TestAgentGroupDeleted(t *testing.T) {
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{jobsets: "JobSetList"}, group(nil, nil))
	core := k8sfake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}})
	cfg, _, err := parse([]string{"--namespace", "ns", "--pod", "p", "--owner", "train"})
	require.NoError(t, err)
	cfg.resync = 20 * time.Millisecond // the fake's watch may start after an update
	owners := dyn.Resource(jobsets).Namespace("ns")
	a := newAgent(cfg, owners, core.CoreV1().Pods("ns"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		code, err := a.run(ctx)
		done <- result{code, err}
	}()
	require.Eventually(t, func() bool {
		p, err := core.CoreV1().Pods("ns").Get(ctx, "p", metav1.GetOptions{})
		return err == nil && p.Annotations[plaingroup.AnnotationInPlaceRestartAttempt] == "0"
	}, 5*time.Second, 5*time.Millisecond, "attempt 0 before the group's first")
	require.NoError(t, owners.Delete(ctx, "train", metav1.DeleteOptions{}))
	r := <-done
	assert.Equal(t, 1, r.code)
	assert.ErrorContains(t, r.err, "train")
}
