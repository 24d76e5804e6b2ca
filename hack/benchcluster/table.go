package main

import (
	"fmt"
	"io"
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

// writeTables prints, for each case and limit, the two controllers side by side
// (kcm | jobkit, and jobkit / kcm), then the controllers' requests by verb and
// resource.
func writeTables(w io.Writer, results []result) {
	type key struct{ cs, q string }
	byKey := map[key]map[string]result{}
	var order []key
	for _, r := range results {
		k := key{r.Case.Name, r.Limits.String()}
		if byKey[k] == nil {
			byKey[k] = map[string]result{}
			order = append(order, k)
		}
		byKey[k][r.Controller] = r // with several rounds, the last one
	}
	fmt.Fprintln(w, "| case | pods | QPS/burst | time s kcm / jobkit | ratio | writes kcm / jobkit | reads kcm / jobkit | controller CPU s kcm / jobkit | ratio | peak RSS MiB kcm / jobkit | kube-apiserver CPU s kcm / jobkit |")
	fmt.Fprintln(w, "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, k := range order {
		a, b := byKey[k]["kcm"], byKey[k]["jobkit"]
		fmt.Fprintf(w, "| %s | %d | %s | %.1f / %.1f | %s | %.0f / %.0f | %.0f / %.0f | %.1f / %.1f | %s | %.0f / %.0f | %.1f / %.1f |\n",
			k.cs, a.Case.Pods(), k.q, a.Duration.Seconds(), b.Duration.Seconds(), ratio(b.Duration.Seconds(), a.Duration.Seconds()),
			a.writes(), b.writes(), a.reads(), b.reads(), a.CPU, b.CPU, ratio(b.CPU, a.CPU),
			mib(a.PeakRSS), mib(b.PeakRSS), a.OtherCPU["kube-apiserver"], b.OtherCPU["kube-apiserver"])
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
			r, ok := byKey[k][name]
			if !ok {
				continue
			}
			fmt.Fprintf(w, "| %s | %s | %s |", k.cs, k.q, name)
			for _, c := range cols {
				fmt.Fprintf(w, " %.0f |", r.Requests[c])
			}
			fmt.Fprintln(w)
		}
	}
}
