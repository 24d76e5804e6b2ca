package cmdflags_test

import (
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/jobkit/jobkit/examples/internal/cmdflags"
)

func TestFeatureGates(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		want    bool
		wantErr string
	}{
		{name: "off by default"},
		{name: "on", args: []string{"--feature-gates=InPlaceRestart=true"}, want: true},
		{name: "off again by a later value", args: []string{"--feature-gates=InPlaceRestart=true", "--feature-gates=InPlaceRestart=false"}},
		{name: "spaces and empty items", args: []string{"--feature-gates= InPlaceRestart = true ,"}, want: true},
		{name: "an unknown gate", args: []string{"--feature-gates=ElasticJobSet=true"}, wantErr: "unrecognized feature gate: ElasticJobSet (known: InPlaceRestart)"},
		{name: "no value", args: []string{"--feature-gates=InPlaceRestart"}, wantErr: "missing bool value for InPlaceRestart"},
		{name: "not a boolean", args: []string{"--feature-gates=InPlaceRestart=yes"}, wantErr: "invalid value of InPlaceRestart=yes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			g := cmdflags.NewFeatureGates(map[string]bool{"InPlaceRestart": false})
			fs.Var(g, "feature-gates", "gates")
			err := fs.Parse(tc.args)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NoError(t, err)
			assert.Equal(t, tc.want, g.Enabled("InPlaceRestart"), "Enabled(InPlaceRestart)")
		})
	}
}
