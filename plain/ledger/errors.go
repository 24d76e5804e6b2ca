package ledger

import (
	"strconv"
	"strings"
)

// List names the list an [EntryError] is about.
type List string

// The lists of Record's and Settle's input.
const (
	// ListSucceeded is Uncounted.Succeeded.
	ListSucceeded List = "uncounted.succeeded"
	// ListFailed is Uncounted.Failed.
	ListFailed List = "uncounted.failed"
	// ListFinished is Record's finished argument.
	ListFinished List = "finished"
)

// Problem says what is wrong with an entry.
type Problem int

// The problems Record and Settle report.
const (
	// ProblemDuplicate: the UID was listed before (in the same uncounted list, or
	// earlier in finished). The entry is dropped.
	ProblemDuplicate Problem = iota + 1
	// ProblemInBothLists: a UID of Uncounted.Succeeded is also in Failed. It is
	// kept in failed only.
	ProblemInBothLists
	// ProblemNoUID: a finished entry without UID. It is not recorded and stays
	// held.
	ProblemNoUID
	// ProblemNegativeIndex: a SucceededIndex entry with a negative Index. It is
	// not recorded and stays held.
	ProblemNegativeIndex
	// ProblemUnknownOutcome: a finished entry whose Outcome is none of the four.
	// It is not recorded and stays held.
	ProblemUnknownOutcome
)

// EntryError is one bad entry of Record's or Settle's input, skipped or repaired.
type EntryError struct {
	// List and Pos locate the entry: List[Pos].
	List List
	Pos  int
	// Problem says what is wrong.
	Problem Problem
	// UID is the entry's UID (empty with ProblemNoUID).
	UID string
	// Index is the rejected index (ProblemNegativeIndex).
	Index int
	// Outcome is the rejected outcome (ProblemUnknownOutcome).
	Outcome Outcome
}

// Field returns List[Pos] with the field at fault, e.g. "finished[3].index".
func (e *EntryError) Field() string {
	f := string(e.List) + "[" + strconv.Itoa(e.Pos) + "]"
	switch {
	case e.List != ListFinished:
	case e.Problem == ProblemNegativeIndex:
		f += ".index"
	case e.Problem == ProblemUnknownOutcome:
		f += ".outcome"
	default:
		f += ".uid"
	}
	return f
}

// Detail says what is wrong and what was done about it.
func (e *EntryError) Detail() string {
	switch e.Problem {
	case ProblemDuplicate:
		return "duplicate UID " + strconv.Quote(e.UID) + "; kept once"
	case ProblemInBothLists:
		return "UID " + strconv.Quote(e.UID) + " is also listed in failed; kept once, as failed"
	case ProblemNoUID:
		return "a UID is required; not recorded, still held"
	case ProblemNegativeIndex:
		return "index " + strconv.Itoa(e.Index) + " of UID " + strconv.Quote(e.UID) + " must be >= 0 with outcome SucceededIndex; not recorded, still held"
	case ProblemUnknownOutcome:
		return "unknown outcome " + e.Outcome.String() + " of UID " + strconv.Quote(e.UID) +
			` (valid: "Succeeded", "SucceededIndex", "Failed", "NotCounted"); not recorded, still held`
	}
	return "problem " + strconv.Itoa(int(e.Problem))
}

func (e *EntryError) Error() string { return "ledger: " + e.Field() + ": " + e.Detail() }

// Errors is the error Record and Settle return: every bad entry, in input order
// (the uncounted lists first, failed before succeeded, then finished).
type Errors []*EntryError

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Field() + ": " + e.Detail()
	}
	return "ledger: " + strings.Join(parts, "; ")
}

// Unwrap returns the entries' errors, so errors.As(err, &entryErr) finds the first.
func (es Errors) Unwrap() []error {
	errs := make([]error, len(es))
	for i, e := range es {
		errs[i] = e
	}
	return errs
}

// err returns es as an error, nil when empty.
func (es Errors) err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}
