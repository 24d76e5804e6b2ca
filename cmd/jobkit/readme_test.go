package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadme checks that each output block of the guide to jobkit explain,
// docs/explain.md (marked <!-- explain-golden: NAME -->), is the golden file it claims
// to be, so the guide cannot drift from what the tool prints.
func TestReadme(t *testing.T) {
	readme, err := os.ReadFile("../../docs/explain.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)<!-- explain-golden: ([a-z-]+) -->\n```text\n\\$ [^\n]*\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	if len(blocks) == 0 {
		t.Fatal("docs/explain.md: no <!-- explain-golden: NAME --> block")
	}
	for _, b := range blocks {
		t.Run(b[1], func(t *testing.T) {
			want, err := os.ReadFile("testdata/golden/" + b[1] + ".txt")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), b[2]); diff != "" {
				t.Errorf("docs/explain.md block %s differs from its golden file (-golden +readme):\n%s", b[1], diff)
			}
			if !strings.Contains(b[0], "jobkit explain ") {
				t.Errorf("docs/explain.md block %s does not show the command", b[1])
			}
		})
	}
}
