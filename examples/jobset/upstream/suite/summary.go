package controllertest

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Outcome is what became of one spec of the suite.
type Outcome struct {
	// Name is the spec's full text: its containers' and its own.
	Name string
	// State is "passed", "failed" or "skipped" (a panic or a timeout counts
	// as failed).
	State string
	// Reason says why a spec failed (the first line of its failure) or was
	// skipped (its entry of Skipped); empty for one that passed.
	Reason string
	// Duration is how long the spec ran.
	Duration time.Duration
}

// Counts are the number of specs in each state.
type Counts struct{ Passed, Failed, Skipped int }

// Summary writes one line per outcome, sorted by state (failed first, then
// skipped, then passed) and name, and a last line with the counts, which it
// returns. A line holds the state, the duration in seconds and the name,
// and a reason its first line under it.
func Summary(w io.Writer, outcomes []Outcome) Counts {
	rank := map[string]int{"failed": 0, "skipped": 1, "passed": 2}
	sorted := append([]Outcome(nil), outcomes...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if rank[sorted[i].State] != rank[sorted[j].State] {
			return rank[sorted[i].State] < rank[sorted[j].State]
		}
		return sorted[i].Name < sorted[j].Name
	})
	var c Counts
	for _, o := range sorted {
		switch o.State {
		case "passed":
			c.Passed++
		case "skipped":
			c.Skipped++
		default:
			c.Failed++
		}
		line := fmt.Sprintf("%-7s %5.1fs %s", strings.ToUpper(o.State), o.Duration.Seconds(), o.Name)
		if r, _, _ := strings.Cut(strings.TrimSpace(o.Reason), "\n"); r != "" {
			line += "\n        reason: " + r
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "JobSet's integration suite against jobkit: %d passed, %d failed, %d skipped\n", c.Passed, c.Failed, c.Skipped)
	return c
}
