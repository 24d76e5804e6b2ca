package indexes

import plainindexes "github.com/jobkit/jobkit/plain/indexes"

// iv builds Intervals from bounds taken two by two: iv(1, 1, 3, 5) is {1}, {3-5}.
func iv(bounds ...int) plainindexes.Intervals {
	out := make(plainindexes.Intervals, 0, len(bounds)/2)
	for len(bounds) >= 2 {
		out = append(out, plainindexes.Interval{First: bounds[0], Last: bounds[1]})
		bounds = bounds[2:]
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
