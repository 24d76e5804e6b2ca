package group

import (
	"fmt"
	"time"
)

// Expiry is what a TTL after finished says of a group.
type Expiry struct {
	// Expired is true when the group is to be deleted now.
	Expired bool
	// At is when it expires: the finish time plus the TTL.
	At time.Time
	// Left is the time until At, at most zero once Expired; look again after
	// it.
	Left time.Duration
}

// TTL applies spec.ttlSecondsAfterFinished (nil: never deleted) to a group with
// the given conditions at now. The time is measured from the LastTransitionTime
// of the True Completed or Failed condition; the group expires when no time is
// left. A group already being deleted never expires. It returns an error wrapping
// [ErrNotFinished] when a TTL is set but the group has not finished, and one
// wrapping [ErrInvalid] for a negative TTL.
func TTL(ttlSeconds *int32, conds []Condition, deleting bool, now time.Time) (Expiry, error) {
	if ttlSeconds == nil || deleting {
		return Expiry{}, nil
	}
	if *ttlSeconds < 0 {
		return Expiry{}, fmt.Errorf("group: ttlSecondsAfterFinished %d: %w", *ttlSeconds, ErrInvalid)
	}
	f := Finished(conds)
	if f == nil {
		return Expiry{}, fmt.Errorf("group: ttlSecondsAfterFinished: %w", ErrNotFinished)
	}
	at := f.LastTransitionTime.Add(time.Duration(*ttlSeconds) * time.Second)
	left := at.Sub(now)
	return Expiry{Expired: left <= 0, At: at, Left: left}, nil
}

// Suspension is what suspending or resuming a group does to its children.
type Suspension struct {
	// Suspend and Resume are positions in children of the children whose
	// spec.suspend must be set or cleared.
	Suspend, Resume []int
	// Condition is Suspended=True (SuspendedJobs) or Suspended=False
	// (ResumeJobs), for [SetCondition].
	Condition Condition
}

// Suspend is [Terms.Suspend] in JobSet's words.
func Suspend(suspend bool, roles []Role, children []Child, c Counters, allowed []bool) Suspension {
	return Terms{}.Suspend(suspend, roles, children, c, allowed)
}

// Suspend decides the suspension of the running children of the current attempt:
// with suspend set, every one not yet suspended is suspended; otherwise every
// suspended one is resumed, for the roles that may start (allowed from
// [MayStart]; nil allows every role), so InOrder resumes role after role.
// Finished children and children of old attempts are left alone. O(roles +
// children); allocates the result. Its condition's message is worded by t.
func (t Terms) Suspend(suspend bool, roles []Role, children []Child, c Counters, allowed []bool) Suspension {
	var s Suspension
	if suspend {
		s.Condition = Condition{Type: ConditionSuspended, Status: True, Reason: reasonSuspended, Message: t.suspended()}
	} else {
		s.Condition = Condition{Type: ConditionSuspended, Status: False, Reason: reasonResumed, Message: t.resumed()}
	}
	pos := roleIndex(roles)
	for i := range children {
		ch := &children[i]
		if ch.Outcome != Running || !c.Current(ch) || ch.Suspended == suspend {
			continue
		}
		if suspend {
			s.Suspend = append(s.Suspend, i)
			continue
		}
		r, ok := pos(ch.Role)
		if allowed != nil && (!ok || r >= len(allowed) || !allowed[r]) {
			continue
		}
		s.Resume = append(s.Resume, i)
	}
	return s
}
