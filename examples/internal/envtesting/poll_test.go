package envtesting

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// after returns a condition that holds from its n-th call on (never, for n < 0),
// and the number of calls so far.
func after(n int) (func() (bool, string), *int) {
	calls := new(int)
	return func() (bool, string) {
		*calls++
		return n >= 0 && *calls >= n, "call " + strings.Repeat("|", *calls)
	}, calls
}

func TestPollUntil(t *testing.T) {
	fast := Poll{Timeout: 50 * time.Millisecond, Every: time.Millisecond}
	tests := []struct {
		name      string
		holdsFrom int // the call from which cond holds; -1: never
		wantErr   string
		wantCalls int // exact when not 0
	}{
		{name: "holds at once", holdsFrom: 1, wantCalls: 1},
		{name: "holds at the fifth look", holdsFrom: 5, wantCalls: 5},
		{name: "never holds", holdsFrom: -1, wantErr: "timed out after 50ms: call |"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cond, calls := after(tt.holdsFrom)
			err := fast.Until(cond)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Until() = %v, want nil", err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Until() = %v, want an error containing %q", err, tt.wantErr)
			}
			if tt.wantCalls != 0 && *calls != tt.wantCalls {
				t.Errorf("cond called %d times, want %d", *calls, tt.wantCalls)
			}
		})
	}
}

func TestPollUntilGivesTheLastDescription(t *testing.T) {
	cond, calls := after(-1)
	err := Poll{Timeout: 20 * time.Millisecond, Every: time.Millisecond}.Until(cond)
	want := "call " + strings.Repeat("|", *calls)
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("Until() = %v, want it to end with the last description %q", err, want)
	}
}

func TestPollWhile(t *testing.T) {
	tests := []struct {
		name    string
		failAt  int // the first call at which cond does not hold; 0: never
		wantErr string
	}{
		{name: "holds throughout"},
		{name: "fails at once", failAt: 1, wantErr: "no longer true: call 1"},
		{name: "fails at the third look", failAt: 3, wantErr: "no longer true: call 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			cond := func() (bool, string) {
				calls++
				return tt.failAt == 0 || calls < tt.failAt, "call " + string(rune('0'+calls))
			}
			start := time.Now()
			err := Poll{Quiet: 30 * time.Millisecond, Every: time.Millisecond}.While(cond)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("While() = %v, want nil", err)
				}
				if d := time.Since(start); d < 30*time.Millisecond {
					t.Errorf("While() returned after %v, want it to watch for the quiet period of 30ms", d)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("While() = %v, want %q", err, tt.wantErr)
			}
			if calls != tt.failAt {
				t.Errorf("cond called %d times, want %d (While stops at the first failure)", calls, tt.failAt)
			}
		})
	}
}

func TestPollDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   Poll
		want Poll
	}{
		{name: "zero", in: Poll{}, want: Poll{Timeout: DefaultTimeout, Quiet: DefaultQuiet, Every: DefaultEvery}},
		{name: "negative", in: Poll{Timeout: -1, Quiet: -1, Every: -1}, want: Poll{Timeout: DefaultTimeout, Quiet: DefaultQuiet, Every: DefaultEvery}},
		{name: "set", in: Poll{Timeout: time.Minute, Quiet: time.Second, Every: time.Millisecond}, want: Poll{Timeout: time.Minute, Quiet: time.Second, Every: time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.in.withDefaults(); got != tt.want {
				t.Errorf("%+v.withDefaults() = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

// recorder is a testing.TB that keeps what Fatalf says and ends the goroutine,
// as testing.T does.
type recorder struct {
	testing.TB
	fatal    string
	errors   []string
	cleanups []func()
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

// cleanup runs the cleanups, the last registered first.
func (r *recorder) cleanup() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Fatal(args ...any) {
	r.fatal = fmt.Sprint(args...)
	runtime.Goexit()
}

// onGoroutine runs f with a recorder on a goroutine of its own and returns what
// it failed with ("" when it did not).
func onGoroutine(f func(testing.TB)) string { return onGoroutineWith(&recorder{}, f) }

// onGoroutineWith is onGoroutine with the recorder r.
func onGoroutineWith(r *recorder, f func(testing.TB)) string {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.fatal
}

func TestEventuallyAndConsistentlyFailTheTest(t *testing.T) {
	p := Poll{Timeout: 10 * time.Millisecond, Quiet: 10 * time.Millisecond, Every: time.Millisecond}
	never := func() (bool, string) { return false, "pods: 0" }
	always := func() (bool, string) { return true, "pods: 3" }
	tests := []struct {
		name string
		run  func(testing.TB)
		want string // the failure's start; empty: no failure
	}{
		{name: "Eventually holds", run: func(tb testing.TB) { p.Eventually(tb, "3 pods", always) }},
		{name: "Eventually times out", run: func(tb testing.TB) { p.Eventually(tb, "3 pods", never) }, want: "waiting for 3 pods: timed out after 10ms: pods: 0"},
		{name: "Consistently holds", run: func(tb testing.TB) { p.Consistently(tb, "3 pods", always) }},
		{name: "Consistently stops holding", run: func(tb testing.TB) { p.Consistently(tb, "3 pods", never) }, want: "3 pods: no longer true: pods: 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := onGoroutine(tt.run); got != tt.want {
				t.Errorf("failure = %q, want %q", got, tt.want)
			}
		})
	}
}
