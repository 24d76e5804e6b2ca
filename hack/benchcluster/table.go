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

// line is the one-line progress report of a run.
func (r result) line() string {
	var keys []string
	for k, v := range r.Requests {
		keys = append(keys, fmt.Sprintf("%s=%.0f", k, v))
	}
	sort.Strings(keys)
	return fmt.Sprintf("%-16s %-9s %-7s %7.1fs cpu=%.1fs rss=%.0fMiB apiserver=%.1fs kwok=%.1fs etcd=%.1fs %s",
		r.Case.Name, r.Limits, r.Controller, r.Duration.Seconds(), r.CPU, mib(r.PeakRSS),
		r.OtherCPU["kube-apiserver"], r.OtherCPU["kwok"], r.OtherCPU["etcd"], strings.Join(keys, " "))
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
	Rounds                                 int
	Duration, Writes, Reads, CPU, RSS, API float64
	Requests                               requests
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
	keys := map[requestKey]bool{}
	for _, r := range rs {
		for k := range r.Requests {
			keys[k] = true
		}
	}
	for k := range keys {
		s.Requests[k] = pick(func(r result) float64 { return r.Requests[k] })
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
	fmt.Fprintln(w, "| case | pods | QPS/burst | rounds | time s kcm / jobkit | ratio | writes kcm / jobkit | reads kcm / jobkit | controller CPU s kcm / jobkit | ratio | peak RSS MiB kcm / jobkit | kube-apiserver CPU s kcm / jobkit |")
	fmt.Fprintln(w, "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, k := range order {
		a, b := sums[k]["kcm"], sums[k]["jobkit"]
		fmt.Fprintf(w, "| %s | %d | %s | %d | %.1f / %.1f | %s | %.0f / %.0f | %.0f / %.0f | %.1f / %.1f | %s | %.0f / %.0f | %.1f / %.1f |\n",
			k.cs, pods[k], k.q, max(a.Rounds, b.Rounds), a.Duration, b.Duration, ratio(b.Duration, a.Duration),
			a.Writes, b.Writes, a.Reads, b.Reads, a.CPU, b.CPU, ratio(b.CPU, a.CPU),
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
}
