package indexes

import plainindexes "github.com/jobkit/jobkit/plain/indexes"

// The interval sets live in the plain layer ([plainindexes]), which imports only the
// standard library; these names keep the Kubernetes layer's API working. Each is the
// same type, constant or function, not a copy.

// NoLimit passed as the limit of [Parse] accepts every index up to math.MaxInt32.
const NoLimit = plainindexes.NoLimit

// Interval is an inclusive range of completion indexes; see [plainindexes.Interval].
type Interval = plainindexes.Interval

// Intervals is a canonical set of completion indexes; see [plainindexes.Intervals].
type Intervals = plainindexes.Intervals

// PartError describes one invalid part of an interval string; see
// [plainindexes.PartError].
type PartError = plainindexes.PartError

// ParseError reports every invalid part of an interval string; see
// [plainindexes.ParseError].
type ParseError = plainindexes.ParseError

// Reasons used in PartError.Reason; see the plain layer's constants.
const (
	ReasonEmpty       = plainindexes.ReasonEmpty
	ReasonNotNumber   = plainindexes.ReasonNotNumber
	ReasonDecreasing  = plainindexes.ReasonDecreasing
	ReasonOutOfRange  = plainindexes.ReasonOutOfRange
	ReasonOutOfOrder  = plainindexes.ReasonOutOfOrder
	ReasonOverlapping = plainindexes.ReasonOverlapping
	ReasonTooManyDash = plainindexes.ReasonTooManyDash
)

// ErrOutOfRange is matched by errors.Is on a *ParseError with a part at or above the
// limit; see [plainindexes.ErrOutOfRange].
var ErrOutOfRange = plainindexes.ErrOutOfRange

// Parse reads the status form of an index set ("1,3-5,7"); see [plainindexes.Parse].
func Parse(s string, limit int) (Intervals, error) { return plainindexes.Parse(s, limit) }

// FromIndexes builds canonical Intervals from indexes in any order; see
// [plainindexes.FromIndexes].
func FromIndexes(xs []int) Intervals { return plainindexes.FromIndexes(xs) }

// FirstPending returns the lowest n pending indexes; see [plainindexes.FirstPending].
func FirstPending(completions, n int, exclude ...Intervals) []int {
	return plainindexes.FirstPending(completions, n, exclude...)
}

// FirstPendingFunc is [FirstPending] with a skip function; see
// [plainindexes.FirstPendingFunc].
func FirstPendingFunc(completions, n int, skip func(index int) bool, exclude ...Intervals) []int {
	return plainindexes.FirstPendingFunc(completions, n, skip, exclude...)
}
