package group_test

import (
	"testing"
	"time"

	"github.com/jobkit/jobkit/plain/group"
)

// FuzzRules runs every rule over arbitrary children and counters and checks the
// invariants: no panic, counters never go backwards, a restart adds exactly one,
// Creations never returns a taken index or one out of range.
func FuzzRules(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(2), int8(0))
	f.Add([]byte{0, 0, 2, 0, 0, 2, 1, 1, 1, 3, 3, 3}, uint8(0), int8(1))
	roles := []group.Role{{Name: "a", Replicas: 2, Parallelism: 1}, {Name: "b", Replicas: 3, Parallelism: 2}}
	names := []string{"a", "b", "", "zz"}
	actions := []group.Action{"Bogus", group.FailJobSet, group.RestartJobSet, group.RestartJobSetAndIgnoreMaxRestarts, group.RestartJob, group.RestartJobAndIgnoreMaxRestarts}
	f.Fuzz(func(t *testing.T, data []byte, maxRestarts uint8, restarts int8) {
		var children []group.Child
		for i := 0; i+2 < len(data); i += 3 {
			children = append(children, group.Child{
				Name: "c", Role: names[int(data[i])%len(names)], Index: int32(int8(data[i+1])) % 5,
				Attempt: int32(data[i+2]%3) - 1, Outcome: group.Outcome(data[i] % 3),
				Ready: int32(data[i+1] % 3), Active: int32(data[i+2] % 2), FinishedAt: time.Unix(int64(data[i+1]), 0),
			})
		}
		var rules []group.Rule
		for i, b := range data {
			if i >= 4 {
				break
			}
			rules = append(rules, group.Rule{Name: "r", Action: actions[int(b)%len(actions)], TargetReplicatedJobs: names[int(b)%2 : int(b)%2+1]})
		}
		c := group.Counters{Restarts: int32(restarts), RestartsCountTowardsMax: int32(restarts) / 2}
		m, err := group.Compile(&group.FailurePolicy{MaxRestarts: int32(maxRestarts), Rules: rules})
		if err != nil {
			t.Fatal(err)
		}
		d, err := m.Decide(children, c)
		if err == nil {
			if d.Counters.Restarts < c.Restarts || d.Counters.RestartsCountTowardsMax < c.RestartsCountTowardsMax {
				t.Fatalf("counters went backwards: %+v -> %+v", c, d.Counters)
			}
			if d.Effect == group.RestartGroup && d.Counters.Restarts != c.Restarts+1 {
				t.Fatalf("restart added %d", d.Counters.Restarts-c.Restarts)
			}
		}
		group.Succeed(nil, roles, children, c)
		group.Statuses(roles, children, c)
		for _, s := range []group.RestartStrategy{group.Recreate, group.BlockingRecreate} {
			for _, slot := range group.Creations(roles, children, c, s, nil) {
				if slot.Index < 0 || slot.Index >= roles[slot.Role].Replicas {
					t.Fatalf("slot out of range: %+v", slot)
				}
				for _, ch := range children {
					if ch.Role == roles[slot.Role].Name && ch.Index == slot.Index {
						t.Fatalf("slot %+v is held by a child", slot)
					}
				}
			}
		}
	})
}
