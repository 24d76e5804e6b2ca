package indexes

// iv builds Intervals from bounds taken two by two: iv(1, 1, 3, 5) is {1}, {3-5}.
func iv(bounds ...int) Intervals {
	out := make(Intervals, 0, len(bounds)/2)
	for len(bounds) >= 2 {
		out = append(out, Interval{First: bounds[0], Last: bounds[1]})
		bounds = bounds[2:]
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
