package kueue

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
)

func TestConfigOptions(t *testing.T) {
	nsIn := func(names ...string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: names}}}
	}
	tests := []struct {
		name                        string
		cfg                         *configapi.Configuration
		wantWithoutQueue, wantReady bool
		wantLabels                  []string
		wantMatch, wantNoMatch      string
		wantErr                     string
	}{
		{name: "nil", cfg: nil},
		{name: "defaults: kube-system not managed", cfg: &configapi.Configuration{},
			wantMatch: "team-a", wantNoMatch: "kube-system"},
		{name: "every setting", cfg: &configapi.Configuration{
			ManageJobsWithoutQueueName:   true,
			ManagedJobsNamespaceSelector: nsIn("team-a"),
			WaitForPodsReady:             &configapi.WaitForPodsReady{Timeout: metav1.Duration{Duration: time.Minute}},
			Integrations:                 &configapi.Integrations{LabelKeysToCopy: []string{"team"}},
		}, wantWithoutQueue: true, wantReady: true, wantLabels: []string{"team"}, wantMatch: "team-a", wantNoMatch: "team-b"},
		{name: "bad selector", cfg: &configapi.Configuration{ManagedJobsNamespaceSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Near"}}}},
			wantErr: "Configuration.managedJobsNamespaceSelector"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, err := configOptions(tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("configOptions() = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := jobframework.ProcessOptions(opts...)
			if got.ManageJobsWithoutQueueName != tt.wantWithoutQueue || got.WaitForPodsReady != tt.wantReady ||
				strings.Join(got.LabelKeysToCopy, ",") != strings.Join(tt.wantLabels, ",") {
				t.Errorf("options: manageJobsWithoutQueueName %v, waitForPodsReady %v, labelKeysToCopy %v; want %v, %v, %v",
					got.ManageJobsWithoutQueueName, got.WaitForPodsReady, got.LabelKeysToCopy, tt.wantWithoutQueue, tt.wantReady, tt.wantLabels)
			}
			ns := func(name string) labels.Set { return labels.Set{"kubernetes.io/metadata.name": name} }
			if tt.wantMatch != "" && !got.ManagedJobsNamespaceSelector.Matches(ns(tt.wantMatch)) {
				t.Errorf("namespace selector %v does not match %s", got.ManagedJobsNamespaceSelector, tt.wantMatch)
			}
			if tt.wantNoMatch != "" && got.ManagedJobsNamespaceSelector.Matches(ns(tt.wantNoMatch)) {
				t.Errorf("namespace selector %v matches %s", got.ManagedJobsNamespaceSelector, tt.wantNoMatch)
			}
		})
	}
	cfg := &configapi.Configuration{}
	if _, err := configOptions(cfg); err != nil || cfg.ManagedJobsNamespaceSelector != nil {
		t.Errorf("configOptions modified its argument: %+v (%v)", cfg, err)
	}
}
