package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// writes is the number of the controller's writes.
func (r result) writes() float64 {
	var n float64
	for k, v := range r.Requests {
		if isWrite(k.Verb) {
			n += v
		}
	}
	return n
}

// reads is the number of the controller's GET, LIST and WATCH requests.
func (r result) reads() float64 {
	var n float64
	for k, v := range r.Requests {
		if !isWrite(k.Verb) {
			n += v
		}
	}
	return n
}

// line is the one-line progress report of a run, then on lines of their own the
// writes that were not the controller's (kwok's pod status updates among them) and,
// when it was profiled, the controller's CPU by part.
func (r result) line() string {
	var keys, others []string
	for k, v := range r.Requests {
		keys = append(keys, fmt.Sprintf("%s=%.0f", k, v))
	}
	sort.Strings(keys)
	for k, v := range r.OtherRequests {
		if isWrite(k.Verb) {
			others = append(others, fmt.Sprintf("%s=%.0f", k, v))
		}
	}
	sort.Strings(others)
	s := fmt.Sprintf("%-16s %-9s %-7s %7.1fs cpu=%.1fs rss=%.0fMiB syncs=%.0f apiserver=%.1fs kwok=%.1fs etcd=%.1fs %s",
		r.Case.Name, r.Limits, r.Controller, r.Duration.Seconds(), r.CPU, mib(r.PeakRSS), r.Syncs,
		r.OtherCPU["kube-apiserver"], r.OtherCPU["kwok"], r.OtherCPU["etcd"], strings.Join(keys, " "))
	if r.Case.Jobs > 1 {
		s += fmt.Sprintf(" jobs-p50=%.1fs jobs-p99=%.1fs", percentile(r.JobTimes, 0.5), percentile(r.JobTimes, 0.99))
	}
	s += fmt.Sprintf(" watch-events=%.0f", r.Events)
	if len(others) > 0 {
		s += "\n  writes of others: " + strings.Join(others, " ")
	}
	if r.CPUParts != nil {
		s += "\n" + partsLine(r.CPUParts)
	}
	return s
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// summary is the median of each figure over the rounds of one case, limit and
// controller.
type summary struct {
	Rounds                                        int
	Duration, Writes, Reads, CPU, RSS, API, Syncs float64
	Requests                                      requests
	// P50 and P99 are the medians of the runs' quantiles of the Jobs' times, Etcd
	// of etcd's CPU seconds, Events of the watch events (scale.go).
	P50, P99, Etcd, Events float64
	// CPUParts is the median of each part over the rounds that were profiled;
	// nil when none was.
	CPUParts map[string]float64
}

// median is the middle value of xs (the mean of the two middle ones for an even
// count); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func summarize(rs []result) summary {
	s := summary{Rounds: len(rs), Requests: requests{}}
	pick := func(f func(result) float64) float64 {
		var xs []float64
		for _, r := range rs {
			xs = append(xs, f(r))
		}
		return median(xs)
	}
	s.Duration = pick(func(r result) float64 { return r.Duration.Seconds() })
	s.Writes = pick(result.writes)
	s.Reads = pick(result.reads)
	s.CPU = pick(func(r result) float64 { return r.CPU })
	s.RSS = pick(func(r result) float64 { return mib(r.PeakRSS) })
	s.API = pick(func(r result) float64 { return r.OtherCPU["kube-apiserver"] })
	s.Syncs = pick(func(r result) float64 { return r.Syncs })
	s.P50 = pick(func(r result) float64 { return percentile(r.JobTimes, 0.5) })
	s.P99 = pick(func(r result) float64 { return percentile(r.JobTimes, 0.99) })
	s.Etcd = pick(func(r result) float64 { return r.OtherCPU["etcd"] })
	s.Events = pick(func(r result) float64 { return r.Events })
	keys := map[requestKey]bool{}
	for _, r := range rs {
		for k := range r.Requests {
			keys[k] = true
		}
	}
	for k := range keys {
		s.Requests[k] = pick(func(r result) float64 { return r.Requests[k] })
	}
	var profiled []result
	for _, r := range rs {
		if r.CPUParts != nil {
			profiled = append(profiled, r)
		}
	}
	if len(profiled) > 0 {
		s.CPUParts = map[string]float64{}
		for _, name := range partNames() {
			var xs []float64
			for _, r := range profiled {
				xs = append(xs, r.CPUParts[name])
			}
			s.CPUParts[name] = median(xs)
		}
	}
	return s
}

// writeTables prints, for each case and limit, the two controllers side by side
// (kcm | jobkit, and jobkit / kcm), the median of each figure over the rounds, then
// the controllers' requests by verb and resource.
func writeTables(w io.Writer, results []result) {
	type key struct{ cs, q string }
	byKey := map[key]map[string][]result{}
	pods := map[key]int{}
	var order []key
	for _, r := range results {
		k := key{r.Case.Name, r.Limits.String()}
		if byKey[k] == nil {
			byKey[k] = map[string][]result{}
			order = append(order, k)
		}
		byKey[k][r.Controller] = append(byKey[k][r.Controller], r)
		pods[k] = r.Case.Pods()
	}
	sums := map[key]map[string]summary{}
	for k, byCtrl := range byKey {
		sums[k] = map[string]summary{}
		for name, rs := range byCtrl {
			sums[k][name] = summarize(rs)
		}
	}
	fmt.Fprintln(w, "| case | pods | QPS/burst | rounds | time s kcm / jobkit | ratio | writes kcm / jobkit | reads kcm / jobkit | syncs kcm / jobkit | controller CPU s kcm / jobkit | ratio | peak RSS MiB kcm / jobkit | kube-apiserver CPU s kcm / jobkit |")
	fmt.Fprintln(w, "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, k := range order {
		a, b := sums[k]["kcm"], sums[k]["jobkit"]
		fmt.Fprintf(w, "| %s | %d | %s | %d | %.1f / %.1f | %s | %.0f / %.0f | %.0f / %.0f | %.0f / %.0f | %.1f / %.1f | %s | %.0f / %.0f | %.1f / %.1f |\n",
			k.cs, pods[k], k.q, max(a.Rounds, b.Rounds), a.Duration, b.Duration, ratio(b.Duration, a.Duration),
			a.Writes, b.Writes, a.Reads, b.Reads, a.Syncs, b.Syncs, a.CPU, b.CPU, ratio(b.CPU, a.CPU),
			a.RSS, b.RSS, a.API, b.API)
	}
	// The requests by verb and resource: one column per series seen in any run.
	seen := map[requestKey]bool{}
	for _, r := range results {
		for k := range r.Requests {
			seen[k] = true
		}
	}
	var cols []requestKey
	for k := range seen {
		cols = append(cols, k)
	}
	sort.Slice(cols, func(i, j int) bool {
		wi, wj := isWrite(cols[i].Verb), isWrite(cols[j].Verb)
		if wi != wj {
			return wi
		}
		return cols[i].String() < cols[j].String()
	})
	fmt.Fprintln(w)
	fmt.Fprint(w, "| case | QPS/burst | controller |")
	for _, c := range cols {
		fmt.Fprintf(w, " %s |", c)
	}
	fmt.Fprint(w, "\n| --- | --- | --- |")
	for range cols {
		fmt.Fprint(w, " ---: |")
	}
	fmt.Fprintln(w)
	for _, k := range order {
		for _, name := range []string{"kcm", "jobkit"} {
			s, ok := sums[k][name]
			if !ok {
				continue
			}
			fmt.Fprintf(w, "| %s | %s | %s |", k.cs, k.q, name)
			for _, c := range cols {
				fmt.Fprintf(w, " %.0f |", s.Requests[c])
			}
			fmt.Fprintln(w)
		}
	}
	scaleOrder, scaleSums := []string{}, map[string]map[string]summary{}
	for _, k := range order {
		scaleOrder = append(scaleOrder, k.cs+" "+k.q)
		scaleSums[k.cs+" "+k.q] = sums[k]
	}
	writeScaleTable(w, scaleOrder, scaleSums)
	for _, k := range order {
		writeParts(w, k.cs, k.q, sums[k]["kcm"].CPUParts, sums[k]["jobkit"].CPUParts)
	}
}

// writeParts prints the controllers' CPU profiles of one case and limit by part
// (medians over the profiled rounds), the floor parts (cpuPart.Floor) summed, and
// the total; nothing when neither was profiled.
func writeParts(w io.Writer, cs, q string, kcm, jobkit map[string]float64) {
	if kcm == nil && jobkit == nil {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "CPU profile of %s at %s by part (median seconds; * the floor: work any client-go controller does for the same watch events)\n\n", cs, q)
	fmt.Fprintln(w, "| part | kcm | jobkit | jobkit / kcm |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: |")
	var floorA, floorB, totalA, totalB float64
	for _, name := range partNames() {
		a, b := kcm[name], jobkit[name]
		totalA, totalB = totalA+a, totalB+b
		label := name
		if isFloor(name) {
			floorA, floorB = floorA+a, floorB+b
			label += " *"
		}
		fmt.Fprintf(w, "| %s | %.2f | %.2f | %s |\n", label, a, b, ratio(b, a))
	}
	fmt.Fprintf(w, "| floor (*) | %.2f | %.2f | %s |\n", floorA, floorB, ratio(floorB, floorA))
	fmt.Fprintf(w, "| total | %.2f | %.2f | %s |\n", totalA, totalB, ratio(totalB, totalA))
}
