package active

import (
	"strconv"
	"testing"
)

func TestWant(t *testing.T) {
	cases := []struct {
		name string
		job  Job
		want int
	}{
		{name: "zero value", job: Job{}, want: 0},
		{name: "completions left below parallelism", job: Job{Completions: 5, Parallelism: 10, Succeeded: 2}, want: 3},
		{name: "parallelism caps", job: Job{Completions: 100, Parallelism: 4, Succeeded: 2, Active: 9}, want: 4},
		{name: "all done", job: Job{Completions: 5, Parallelism: 4, Succeeded: 5}, want: 0},
		{name: "more succeeded than completions (scale-down)", job: Job{Completions: 3, Parallelism: 4, Succeeded: 5}, want: 0},
		{name: "work queue before a success", job: Job{Completions: NoCompletions, Parallelism: 3, Active: 1}, want: 3},
		{name: "work queue after a success keeps the running pods", job: Job{Completions: NoCompletions, Parallelism: 3, Succeeded: 1, Active: 2}, want: 2},
		{name: "any negative completions is a work queue", job: Job{Completions: -7, Parallelism: 2}, want: 2},
		{name: "suspended", job: Job{Completions: 5, Parallelism: 5, Suspended: true, Active: 5}, want: 0},
		{name: "suspended work queue", job: Job{Completions: NoCompletions, Parallelism: 5, Suspended: true}, want: 0},
		{name: "negative parallelism counts 0", job: Job{Completions: 5, Parallelism: -1}, want: 0},
		{name: "negative succeeded counts 0", job: Job{Completions: 5, Parallelism: 9, Succeeded: -3}, want: 5},
		{name: "negative active counts 0", job: Job{Completions: NoCompletions, Parallelism: 9, Succeeded: 1, Active: -3}, want: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Want(tc.job); got != tc.want {
				t.Errorf("Want(%+v) = %d, want %d", tc.job, got, tc.want)
			}
		})
	}
}

func TestWantDoesNotAllocate(t *testing.T) {
	j := Job{Completions: 10, Parallelism: 3, Succeeded: 1}
	if n := testing.AllocsPerRun(100, func() { _ = Want(j) }); n != 0 {
		t.Errorf("Want allocates %v times, want 0", n)
	}
}

func BenchmarkWant(b *testing.B) {
	for _, n := range []int{10, 1000, 100000} {
		j := Job{Completions: n, Parallelism: n / 2, Succeeded: n / 3, Active: n / 4}
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Want(j)
			}
		})
	}
}
