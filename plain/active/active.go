package active

// NoCompletions as Job.Completions stands for a Job without spec.completions: a work
// queue, whose pods coordinate among themselves and which is done once any pod
// succeeds. Every negative Completions means the same.
const NoCompletions = -1

// Job holds what the number of wanted pods depends on. Negative Parallelism,
// Succeeded and Active count 0.
type Job struct {
	// Completions is spec.completions, or NoCompletions when unset.
	Completions int
	// Parallelism is spec.parallelism: the most pods that run at once.
	Parallelism int
	// Succeeded is the completions done: succeeded pods (NonIndexed) or succeeded
	// indexes (Indexed), counted or not yet counted in the status.
	Succeeded int
	// Active is the number of pods running or about to (not finished, not being
	// deleted).
	Active int
	// Suspended is spec.suspend: a suspended Job wants no pod.
	Suspended bool
}

// Want returns how many active pods j wants: none when suspended; for a Job with
// completions, the completions left (Completions - Succeeded), at most Parallelism and
// at least 0; for a work queue, Parallelism until a pod succeeds, and from then on the
// pods that still run (it creates no new pod, and lets those finish).
func Want(j Job) int {
	parallelism, succeeded := max(j.Parallelism, 0), max(j.Succeeded, 0)
	switch {
	case j.Suspended:
		return 0
	case j.Completions < 0 && succeeded > 0:
		return max(j.Active, 0)
	case j.Completions < 0:
		return parallelism
	}
	return max(0, min(j.Completions-succeeded, parallelism))
}
