package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// writes is the number of the side's writes (groupNotController left out).
func (r groupResult) writes() float64 {
	var n float64
	for k, v := range r.Requests {
		if isWrite(k.Verb) {
			n += v
		}
	}
	return n
}

// writesNoEvents is writes without the events (which the Kubernetes event
// recorder's spam filter thins out for kube-controller-manager).
func (r groupResult) writesNoEvents() float64 {
	var n float64
	for k, v := range r.Requests {
		if isWrite(k.Verb) && k.Resource != "events" {
			n += v
		}
	}
	return n
}

// procFigures is "name cpu/rss" for each process, sorted.
func (r groupResult) procFigures() string {
	var parts []string
	for name, v := range r.CPU {
		parts = append(parts, fmt.Sprintf("%s %.1fs %.0fMiB", name, v, mib(r.RSS[name])))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// line is the one-line progress report of a run and its writes by verb and resource.
func (r groupResult) line() string {
	var keys []string
	for k, v := range r.Requests {
		if isWrite(k.Verb) {
			keys = append(keys, fmt.Sprintf("%s=%.0f", k, v))
		}
	}
	sort.Strings(keys)
	s := fmt.Sprintf("%-13s %-7s %6.1fs", r.Case.Name, r.Side, r.Duration.Seconds())
	if r.Case.Restart {
		s += fmt.Sprintf(" (first attempt running after %.1fs)", r.Setup.Seconds())
	}
	return s + fmt.Sprintf(" writes=%.0f controllers cpu=%.1fs rss=%.0fMiB [%s] kube-apiserver=%.1fs\n  writes: %s",
		r.writes(), r.controllerCPU(), mib(r.controllerRSS()), r.procFigures(), r.APIServerCPU, strings.Join(keys, " "))
}

// groupSummary is the median of each figure over the rounds of one case and side.
type groupSummary struct {
	Duration, Setup, Writes, NoEvents, CPU, RSS, API, GC float64
	ProcCPU, ProcRSS                                     map[string]float64
	Requests                                             requests
	Facts                                                []string
}

func summarizeGroups(rs []groupResult) groupSummary {
	pick := func(f func(groupResult) float64) float64 {
		var xs []float64
		for _, r := range rs {
			xs = append(xs, f(r))
		}
		return median(xs)
	}
	s := groupSummary{ProcCPU: map[string]float64{}, ProcRSS: map[string]float64{}, Requests: requests{}, Facts: rs[0].Facts}
	s.Duration = pick(func(r groupResult) float64 { return r.Duration.Seconds() })
	s.Setup = pick(func(r groupResult) float64 { return r.Setup.Seconds() })
	s.Writes = pick(groupResult.writes)
	s.NoEvents = pick(groupResult.writesNoEvents)
	s.CPU = pick(groupResult.controllerCPU)
	s.RSS = pick(func(r groupResult) float64 { return mib(r.controllerRSS()) })
	s.API = pick(func(r groupResult) float64 { return r.APIServerCPU })
	s.GC = pick(func(r groupResult) float64 { return r.CPU["gc"] })
	for name := range rs[0].CPU {
		s.ProcCPU[name] = pick(func(r groupResult) float64 { return r.CPU[name] })
		s.ProcRSS[name] = pick(func(r groupResult) float64 { return mib(r.RSS[name]) })
	}
	for _, r := range rs {
		for k := range r.Requests {
			s.Requests[k] = pick(func(r groupResult) float64 { return r.Requests[k] })
		}
	}
	return s
}

// sideControllers names the measured processes of each side, in the table's order.
var sideControllers = map[string][]string{
	sideJobSet: {"jobset", "kcm"},
	sideJobkit: {"jobkit-jobset", "jobkit"},
	sideOwner:  {"trainingjob"},
}

// writeGroupTables prints one table, each side of each case on a row with its
// ratios to JobSet's, then the writes by verb and resource. It returns false when
// the facts of jobkit's side differ from JobSet's.
func writeGroupTables(w io.Writer, results []groupResult) bool {
	bySide := map[string]map[string][]groupResult{}
	var order []groupCase
	for _, r := range results {
		if bySide[r.Case.Name] == nil {
			bySide[r.Case.Name] = map[string][]groupResult{}
			order = append(order, r.Case)
		}
		bySide[r.Case.Name][r.Side] = append(bySide[r.Case.Name][r.Side], r)
	}
	same := true
	fmt.Fprintln(w, "| case | side | pods | rounds | time s | / JobSet | writes | / JobSet | without events | / JobSet | controller CPU s (each) | / JobSet | peak RSS MiB (each) | / JobSet | kube-apiserver CPU s | GC CPU s | children, counters, conditions |")
	fmt.Fprintln(w, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
	for _, c := range order {
		sums := map[string]groupSummary{}
		for side, rs := range bySide[c.Name] {
			sums[side] = summarizeGroups(rs)
		}
		base, hasBase := sums[sideJobSet]
		for _, side := range []string{sideJobSet, sideJobkit, sideOwner} {
			s, ok := sums[side]
			if !ok {
				continue
			}
			pods := c.pods()
			if side == sideOwner {
				pods = c.ownerPods()
			}
			var each []string
			var rss []string
			for _, name := range sideControllers[side] {
				each = append(each, fmt.Sprintf("%s %.1f", name, s.ProcCPU[name]))
				rss = append(rss, fmt.Sprintf("%s %.0f", name, s.ProcRSS[name]))
			}
			r := func(a, b float64) string {
				if !hasBase {
					return "-"
				}
				return ratio(a, b)
			}
			facts := "JobSet's"
			switch {
			case side == sideOwner:
				facts = "its own: " + strings.Join(s.Facts, "; ")
			case side != sideJobSet && !hasBase:
				facts = "no JobSet run"
			case side != sideJobSet && strings.Join(s.Facts, "\n") != strings.Join(base.Facts, "\n"):
				facts = "DIFFER: " + factsDiff(base.Facts, s.Facts)
				same = false
			case side != sideJobSet:
				facts = "equal"
			}
			time := fmt.Sprintf("%.1f", s.Duration)
			if c.Restart {
				time += fmt.Sprintf(" (setup %.1f)", s.Setup)
			}
			fmt.Fprintf(w, "| %s | %s | %d | %d | %s | %s | %.0f | %s | %.0f | %s | %.1f (%s) | %s | %.0f (%s) | %s | %.1f | %.1f | %s |\n",
				c.Name, side, pods, len(bySide[c.Name][side]), time, r(s.Duration, base.Duration), s.Writes, r(s.Writes, base.Writes),
				s.NoEvents, r(s.NoEvents, base.NoEvents),
				s.CPU, strings.Join(each, ", "), r(s.CPU, base.CPU), s.RSS, strings.Join(rss, ", "), r(s.RSS, base.RSS), s.API, s.GC, facts)
		}
	}
	// The writes by verb and resource.
	seen := map[requestKey]bool{}
	for _, r := range results {
		for k := range r.Requests {
			if isWrite(k.Verb) {
				seen[k] = true
			}
		}
	}
	var cols []requestKey
	for k := range seen {
		cols = append(cols, k)
	}
	sort.Slice(cols, func(i, j int) bool { return cols[i].String() < cols[j].String() })
	fmt.Fprintln(w)
	fmt.Fprint(w, "| case | side |")
	for _, c := range cols {
		fmt.Fprintf(w, " %s |", c)
	}
	fmt.Fprint(w, "\n| --- | --- |")
	for range cols {
		fmt.Fprint(w, " ---: |")
	}
	fmt.Fprintln(w)
	for _, c := range order {
		for _, side := range []string{sideJobSet, sideJobkit, sideOwner} {
			rs, ok := bySide[c.Name][side]
			if !ok {
				continue
			}
			s := summarizeGroups(rs)
			fmt.Fprintf(w, "| %s | %s |", c.Name, side)
			for _, k := range cols {
				fmt.Fprintf(w, " %.0f |", s.Requests[k])
			}
			fmt.Fprintln(w)
		}
	}
	return same
}

// factsDiff names the facts of b that a lacks (+) and those of a that b lacks (-).
func factsDiff(a, b []string) string {
	in := func(xs []string, x string) bool {
		for _, y := range xs {
			if y == x {
				return true
			}
		}
		return false
	}
	var parts []string
	for _, x := range a {
		if !in(b, x) {
			parts = append(parts, "JobSet: "+x)
		}
	}
	for _, x := range b {
		if !in(a, x) {
			parts = append(parts, "jobkit: "+x)
		}
	}
	return strings.Join(parts, "; ")
}
