package main

import (
	"fmt"
	"sort"
)

// count returns the names of p that count towards the budget.
func (p *pkg) count() int {
	n := 0
	for _, e := range p.names {
		if !e.deprecated {
			n++
		}
	}
	return n
}

// count returns the names of m that count towards its budget.
func (m *module) count() int {
	n := 0
	for _, p := range m.pkgs {
		n += p.count()
	}
	return n
}

// pairs lists X beside X+suffix among the live (not deprecated) names of each
// package, as "dir: X/XFor", and among the methods of each type, as
// "dir: T.X/T.XFor", sorted.
func (s *surface) pairs() []string {
	var out []string
	for _, m := range s.modules {
		for _, p := range m.pkgs {
			for _, pr := range pairsIn(p.names) {
				out = append(out, fmt.Sprintf("%s: %s", p.dir, pr))
			}
			for recv, ms := range p.methods {
				for _, pr := range pairsIn(ms) {
					out = append(out, fmt.Sprintf("%s: %s.%s", p.dir, recv, pr))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func pairsIn(names map[string]*entry) []string {
	var out []string
	for n, e := range names {
		if e.deprecated {
			continue
		}
		for _, suf := range doorSuffixes {
			d, ok := names[n+suf.suffix]
			if ok && !d.deprecated && (!suf.funcsOnly || e.fn && d.fn) {
				out = append(out, n+"/"+n+suf.suffix)
			}
		}
	}
	return out
}

// mirrors lists the live names defined over a plain/ type outside plain/, sorted.
func (s *surface) mirrors() []string {
	var out []string
	for _, m := range s.modules {
		for _, p := range m.pkgs {
			for n, e := range p.names {
				if e.mirror != "" && !e.deprecated {
					out = append(out, fmt.Sprintf("%s: %s over %s", p.dir, n, e.mirror))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// deprecatedNames lists the deprecated names, as "dir.X" and "dir.T.M", sorted.
func (s *surface) deprecatedNames() []string {
	var out []string
	for _, m := range s.modules {
		for _, p := range m.pkgs {
			for n, e := range p.names {
				if e.deprecated {
					out = append(out, p.dir+"."+n)
				}
			}
			for recv, ms := range p.methods {
				if t := p.names[recv]; t != nil && t.deprecated {
					continue // listed with its type
				}
				for n, e := range ms {
					if e.deprecated {
						out = append(out, p.dir+"."+recv+"."+n)
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}
