package sim

import "slices"

// Minimize shrinks a trace whose replay breaks invariant inv to one that still
// breaks it with as few actions and faults as it finds, in at most budget replays
// (0 means 3000). It removes chunks of actions, halving their size down to single
// actions (delta debugging), then single faults of the syncs that remain. A trace
// that does not break inv is returned unchanged.
//
// The result replays independently of the generator: it is the trace to commit as
// a regression test.
func Minimize(tr *Trace, inv Invariant, budget int) *Trace {
	if budget <= 0 {
		budget = 3000
	}
	replays := 0
	fails := func(actions []Action) (int, bool) {
		replays++
		t := *tr
		t.Actions = actions
		res, err := Replay(&t)
		if err != nil || len(res.Violations) == 0 || res.Violations[0].Invariant != inv {
			return 0, false
		}
		return res.Violations[0].Action, true
	}
	cur := slices.Clone(tr.Actions)
	at, ok := fails(cur)
	if !ok {
		return tr
	}
	// Nothing after the violation matters.
	if at+1 < len(cur) {
		cur = cur[:at+1]
	}

	chunk := max(len(cur)/2, 1)
	for chunk >= 1 && replays < budget {
		removed := false
		for start := 0; start < len(cur) && replays < budget; {
			end := min(start+chunk, len(cur))
			cand := slices.Concat(cur[:start], cur[end:])
			if at, ok := fails(cand); ok {
				cur = cand
				if at+1 < len(cur) {
					cur = cur[:at+1]
				}
				removed = true
				continue // the same start now points at the next chunk
			}
			start = end
		}
		if !removed {
			chunk /= 2
		}
	}

	// Then the faults of each sync, one at a time.
	for i := 0; i < len(cur) && replays < budget; i++ {
		a := cur[i]
		for j := 0; j < len(a.Faults) && replays < budget; {
			cand := slices.Clone(cur)
			b := a
			b.Faults = slices.Delete(slices.Clone(a.Faults), j, j+1)
			if len(b.Faults) == 0 {
				b.Faults = nil
			}
			cand[i] = b
			if _, ok := fails(cand); ok {
				cur, a = cand, b
				continue
			}
			j++
		}
		if a.Crash != nil && replays < budget {
			cand := slices.Clone(cur)
			b := a
			b.Crash = nil
			cand[i] = b
			if _, ok := fails(cand); ok {
				cur, a = cand, b
			}
		}
		if a.DuringList != 0 && replays < budget {
			cand := slices.Clone(cur)
			b := a
			b.DuringList = 0
			cand[i] = b
			if _, ok := fails(cand); ok {
				cur = cand
			}
		}
	}
	out := *tr
	out.Actions = cur
	return &out
}
