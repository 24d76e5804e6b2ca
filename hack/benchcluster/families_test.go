package main

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestClassify(t *testing.T) {
	got := classify(requests{
		{Verb: "POST", Resource: "pods"}:                              4,
		{Verb: "PATCH", Resource: "pods"}:                             5,
		{Verb: "DELETE", Resource: "pods"}:                            3,
		{Verb: "PUT", Resource: "jobs", Subresource: "status"}:        6,
		{Verb: "POST", Resource: "events"}:                            7,
		{Verb: "PATCH", Resource: "events"}:                           1,
		{Verb: "PATCH", Resource: "pods", Subresource: "status"}:      9, // kwok's and the benchmark's
		{Verb: "POST", Resource: "jobs"}:                              1, // the benchmark's
		{Verb: "GET", Resource: "pods"}:                               40,
		{Verb: "PATCH", Resource: "jobs"}:                             2,
		{Verb: "DELETE", Resource: "jobs"}:                            0, // the benchmark's, taken off
		{Verb: "LIST", Resource: "jobs"}:                              3,
		{Verb: "PUT", Resource: "leases", Subresource: ""}:            8, // not a Job controller's
		{Verb: "WATCH", Resource: "pods"}:                             2,
		{Verb: "APPLY", Resource: "pods"}:                             1,
		{Verb: "PATCH", Resource: "jobs", Subresource: "status"}:      1,
		{Verb: "DELETECOLLECTION", Resource: "pods", Subresource: ""}: 0,
	})
	want := familyWrites{Creates: 4, Patches: 6, Deletes: 3, Status: 7, Events: 8, Other: map[string]float64{"PATCH jobs": 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("classify (-want +got):\n%s", diff)
	}
	if s := got.String(); s != "4/6/3/7/8 +2 PATCH jobs" {
		t.Errorf("String() = %q", s)
	}
}

func TestParseFamilyFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    []string // family slugs
		rounds  int
		wantErr string
	}{
		{name: "all", args: []string{"--kcm", "k", "--jobkit", "j"}, want: slugs(families), rounds: 1},
		{name: "two, case-blind", args: []string{"--kcm", "k", "--jobkit", "j", "--families", "successPolicy,Released-Pod", "--rounds", "3"},
			want: []string{"successpolicy", "released-pod"}, rounds: 3},
		{name: "smoke", args: []string{"--kcm", "k", "--jobkit", "j", "--smoke", "--rounds", "4"}, want: smokeFamilies, rounds: 1},
		{name: "jobkit alone", args: []string{"--jobkit", "j", "--controllers", "jobkit", "--families", "complete-indexed"}, want: []string{"complete-indexed"}, rounds: 1},
		{name: "unknown family", args: []string{"--kcm", "k", "--jobkit", "j", "--families", "complete"}, wantErr: `--families: "complete": want one of complete-nonindexed`},
		{name: "no kcm", args: []string{"--jobkit", "j"}, wantErr: "--kcm and --jobkit are required"},
		{name: "bad controllers", args: []string{"--kcm", "k", "--jobkit", "j", "--controllers", "both"}, wantErr: `--controllers="both"`},
		{name: "no rounds", args: []string{"--kcm", "k", "--jobkit", "j", "--rounds", "0"}, wantErr: "--rounds=0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseFamilyFlags(tt.args, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, slugs(o.families)); diff != "" {
				t.Errorf("families (-want +got):\n%s", diff)
			}
			if o.rounds != tt.rounds {
				t.Errorf("rounds = %d, want %d", o.rounds, tt.rounds)
			}
		})
	}
}

func slugs(fs []familyCase) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.slug())
	}
	return out
}

func TestWriteFamilyTable(t *testing.T) {
	kcm := familyWrites{Creates: 4, Patches: 4, Deletes: 3, Status: 6, Events: 8}
	less := familyWrites{Creates: 4, Patches: 4, Deletes: 3, Status: 5, Events: 8}
	more := familyWrites{Creates: 5, Patches: 4, Deletes: 3, Status: 6, Events: 9}
	tests := []struct {
		name   string
		jobkit familyWrites
		ok     bool
		row    string
	}{
		{name: "fewer", jobkit: less, ok: true, row: "| f | 1 | 4/4/3/6/8 | 4/4/3/5/8 | yes |"},
		{name: "more", jobkit: more, ok: false, row: "| f | 1 | 4/4/3/6/8 | 5/4/3/6/9 | NO: creates 5 > 4, events 9 > 8 |"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			ok := writeFamilyTable(&b, []familyResult{{Family: "f", Controller: "kcm", Writes: kcm}, {Family: "f", Controller: "jobkit", Writes: tt.jobkit}})
			if ok != tt.ok {
				t.Errorf("ok = %v, want %v", ok, tt.ok)
			}
			if !strings.Contains(b.String(), tt.row+"\n") {
				t.Errorf("table lacks %q:\n%s", tt.row, b.String())
			}
		})
	}
}

func TestPodEndPatch(t *testing.T) {
	start := metav1.NewTime(time.Date(2026, 12, 6, 15, 0, 0, 0, time.UTC))
	now := metav1.NewTime(start.Add(3 * time.Second))
	pod := &corev1.Pod{
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "img"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &start},
	}
	tests := []struct {
		code      int32
		phase     corev1.PodPhase
		reason    string
		container string
	}{
		{code: 0, phase: corev1.PodSucceeded, reason: "PodCompleted", container: "Completed"},
		{code: 42, phase: corev1.PodFailed, reason: "PodFailed", container: "Error"},
	}
	for _, tt := range tests {
		raw, err := podEndPatch(pod, tt.code, now)
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ Status corev1.PodStatus }
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		st := got.Status
		if st.Phase != tt.phase || len(st.Conditions) != 3 || st.Conditions[2].Type != corev1.PodReady || st.Conditions[2].Reason != tt.reason {
			t.Errorf("code %d: phase %s, conditions %+v", tt.code, st.Phase, st.Conditions)
		}
		if len(st.ContainerStatuses) != 1 {
			t.Fatalf("code %d: %d container statuses, want 1", tt.code, len(st.ContainerStatuses))
		}
		term := st.ContainerStatuses[0].State.Terminated
		if term == nil || term.ExitCode != tt.code || term.Reason != tt.container || !term.StartedAt.Equal(&start) || !term.FinishedAt.Equal(&now) {
			t.Errorf("code %d: terminated %+v", tt.code, term)
		}
	}
}
