package group

import "cmp"

// Terms are the words the messages of a group's conditions and events use for
// the group and its children. The zero value is JobSet's ("jobset", "job",
// "jobs", a child named by its Job's name), so that a group of child Jobs keeps
// JobSet's messages byte for byte; an owner of another shape words them its own
// way (an owner that runs its roles' pods itself: its kind, "role", "roles",
// named by the role). The reasons never change: they are the API's words.
type Terms struct {
	// Group names the group ("jobset" when empty).
	Group string
	// Child names one child ("job" when empty), Children several ("jobs" when
	// empty).
	Child, Children string
	// ByRole names a child by its role (Child.Role) rather than by its name
	// (Child.Name): for a shape where a role is one child.
	ByRole bool
}

func (t Terms) group() string    { return cmp.Or(t.Group, "jobset") }
func (t Terms) child() string    { return cmp.Or(t.Child, "job") }
func (t Terms) children() string { return cmp.Or(t.Children, "jobs") }

// The messages, from the patterns of JobSet's words (condition.go).
func (t Terms) completed() string { return t.group() + " completed successfully" }
func (t Terms) failedChildren() string {
	return t.group() + " failed due to one or more " + t.child() + " failures"
}
func (t Terms) reachedMaxRestarts() string {
	return t.group() + " failed due to reaching max number of restarts"
}
func (t Terms) suspended() string        { return t.group() + " is suspended" }
func (t Terms) resumed() string          { return t.group() + " is resumed" }
func (t Terms) restartFailed() string    { return t.group() + " failed" }
func (t Terms) restartCompleted() string { return t.group() + " completed" }
func (t Terms) childrenReady() string    { return "all " + t.children() + " are ready" }

// withChild appends the first failed child to msg.
func (t Terms) withChild(msg string, ch *Child) string {
	name := ch.Name
	if t.ByRole {
		name = ch.Role
	}
	return msg + " (first failed " + t.child() + ": " + name + ")"
}
