package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/jobkit/jobkit/reconcile"
)

var cacheSyncEpoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestResourceVersionCaughtUp(t *testing.T) {
	tests := []struct {
		name          string
		seen, written string
		want          bool
	}{
		{name: "numeric equal", seen: "42", written: "42", want: true},
		{name: "numeric newer", seen: "43", written: "42", want: true},
		{name: "numeric older", seen: "41", written: "42", want: false},
		{name: "numeric compares by value, not text", seen: "100", written: "99", want: true},
		{name: "numeric older by value though longer text", seen: "0099", written: "100", want: false},
		{name: "leading zeros equal by value", seen: "042", written: "42", want: true},
		{name: "max uint64", seen: "18446744073709551615", written: "18446744073709551614", want: true},
		{name: "overflowing uint64 is opaque, unequal", seen: "18446744073709551616", written: "1", want: false},
		{name: "opaque equal", seen: "abc", written: "abc", want: true},
		{name: "opaque unequal", seen: "abd", written: "abc", want: false},
		{name: "mixed numeric and opaque", seen: "43", written: "abc", want: false},
		{name: "negative numbers are opaque", seen: "-1", written: "-1", want: true},
		{name: "negative vs numeric is opaque", seen: "5", written: "-1", want: false},
		{name: "empty seen", seen: "", written: "42", want: false},
		{name: "empty written never caught up", seen: "42", written: "", want: false},
		{name: "both empty", seen: "", written: "", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := reconcile.ResourceVersionCaughtUp(tt.seen, tt.written); got != tt.want {
				t.Errorf("ResourceVersionCaughtUp(%q, %q) = %v, want %v", tt.seen, tt.written, got, tt.want)
			}
		})
	}
}

// versionCache is a fake cache: each read returns the next of versions (the last one
// repeats); "" stands for NotFound. It records the fake clock's time of each read.
type versionCache struct {
	clk      *clocktesting.FakeClock
	versions []string
	err      error

	mu    sync.Mutex
	reads []time.Duration
}

func (c *versionCache) read(context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := min(len(c.reads), len(c.versions)-1)
	c.reads = append(c.reads, c.clk.Since(cacheSyncEpoch))
	if c.err != nil {
		return "", c.err
	}
	if c.versions[i] == "" {
		return "", apierrors.NewNotFound(schema.GroupResource{Resource: "runjobs"}, "job-1")
	}
	return c.versions[i], nil
}

func (c *versionCache) readTimes() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.reads...)
}

// waitCacheSyncStepping runs WaitForCacheSync in a goroutine and advances the fake clock by
// step whenever the wait is blocked on its timer, until it returns. The clock only
// moves while the waiter is armed, so the read times are deterministic.
func waitCacheSyncStepping(t *testing.T, clk *clocktesting.FakeClock, step time.Duration, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case err := <-done:
			return err
		case <-deadline:
			t.Fatal("WaitForCacheSync did not return within 10s of real time")
		default:
		}
		if clk.HasWaiters() {
			clk.Step(step)
		} else {
			time.Sleep(50 * time.Microsecond)
		}
	}
}

func TestWaitForCacheSync(t *testing.T) {
	sec := time.Second
	tests := []struct {
		name      string
		versions  []string
		written   string
		opts      reconcile.CacheSyncOptions
		wantReads []time.Duration
		// wantErr, when set, is the CacheSyncError expected (Object is "default/job-1").
		wantErr *reconcile.CacheSyncError
	}{
		{
			name:      "already caught up: one read, no wait",
			versions:  []string{"42"},
			written:   "42",
			opts:      reconcile.CacheSyncOptions{Interval: sec, Timeout: 5 * sec},
			wantReads: []time.Duration{0},
		},
		{
			name:      "newer version also counts",
			versions:  []string{"50"},
			written:   "42",
			opts:      reconcile.CacheSyncOptions{Interval: sec, Timeout: 5 * sec},
			wantReads: []time.Duration{0},
		},
		{
			name:      "catches up on the third read",
			versions:  []string{"40", "41", "42"},
			written:   "42",
			opts:      reconcile.CacheSyncOptions{Interval: sec, Timeout: 5 * sec},
			wantReads: []time.Duration{0, sec, 2 * sec},
		},
		{
			name:      "not found then found (a new object)",
			versions:  []string{"", "", "7"},
			written:   "7",
			opts:      reconcile.CacheSyncOptions{Interval: sec, Timeout: 5 * sec},
			wantReads: []time.Duration{0, sec, 2 * sec},
		},
		{
			name:      "opaque versions by equality",
			versions:  []string{"a", "b"},
			written:   "b",
			opts:      reconcile.CacheSyncOptions{Interval: sec, Timeout: 5 * sec},
			wantReads: []time.Duration{0, sec},
		},
		{
			name:      "timeout: last delay shortened to the deadline",
			versions:  []string{"41"},
			written:   "42",
			opts:      reconcile.CacheSyncOptions{Interval: 3 * sec, Timeout: 5 * sec},
			wantReads: []time.Duration{0, 3 * sec, 5 * sec},
			wantErr:   &reconcile.CacheSyncError{Written: "42", Seen: "41", Found: true, Waited: 5 * sec},
		},
		{
			name:      "timeout while not found",
			versions:  []string{""},
			written:   "42",
			opts:      reconcile.CacheSyncOptions{Interval: sec, Timeout: 2 * sec},
			wantReads: []time.Duration{0, sec, 2 * sec},
			wantErr:   &reconcile.CacheSyncError{Written: "42", Waited: 2 * sec},
		},
		{
			name:      "found then gone: reports the last read",
			versions:  []string{"41", ""},
			written:   "42",
			opts:      reconcile.CacheSyncOptions{Interval: sec, Timeout: sec},
			wantReads: []time.Duration{0, sec},
			wantErr:   &reconcile.CacheSyncError{Written: "42", Waited: sec},
		},
		{
			name:      "zero options: defaults",
			versions:  []string{"41"},
			written:   "42",
			opts:      reconcile.CacheSyncOptions{},
			wantReads: nil, // checked by count below
			wantErr:   &reconcile.CacheSyncError{Written: "42", Seen: "41", Found: true, Waited: reconcile.DefaultCacheSyncTimeout},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(cacheSyncEpoch)
			c := &versionCache{clk: clk, versions: tt.versions}
			opts := tt.opts
			opts.Clock = clk
			step := opts.Interval
			if step == 0 {
				step = reconcile.DefaultCacheSyncInterval
			}
			if opts.Interval > sec { // step finely so that a shortened delay shows
				step = sec
			}
			err := waitCacheSyncStepping(t, clk, step, func() error {
				return reconcile.WaitForCacheSync(context.Background(), "default/job-1", tt.written, c.read, opts)
			})
			if tt.wantReads != nil {
				assert.Equal(t, tt.wantReads, c.readTimes(), "read times since start")
			} else {
				want := int(reconcile.DefaultCacheSyncTimeout/reconcile.DefaultCacheSyncInterval) + 1
				assert.Len(t, c.readTimes(), want, "reads with default options")
			}
			if tt.wantErr == nil {
				require.NoError(t, err)
				return
			}
			var got *reconcile.CacheSyncError
			require.ErrorAs(t, err, &got)
			want := *tt.wantErr
			want.Object = "default/job-1"
			assert.Equal(t, want, *got)
			assert.ErrorIs(t, err, reconcile.ErrCacheNotSynced)
			assert.NotErrorIs(t, err, context.Canceled)
		})
	}
}

func TestWaitForCacheSyncErrorMessage(t *testing.T) {
	tests := []struct {
		name string
		err  *reconcile.CacheSyncError
		want string
	}{
		{
			name: "seen",
			err:  &reconcile.CacheSyncError{Object: "runjobs default/job-1", Written: "42", Seen: "41", Found: true, Waited: 5 * time.Second},
			want: `cache did not catch up with runjobs default/job-1 after 5s: wrote resourceVersion "42", the cache has resourceVersion "41"`,
		},
		{
			name: "not found",
			err:  &reconcile.CacheSyncError{Object: "default/job-1", Written: "42", Waited: time.Second},
			want: `cache did not catch up with default/job-1 after 1s: wrote resourceVersion "42", the cache does not hold the object`,
		},
		{
			name: "context ended",
			err:  &reconcile.CacheSyncError{Object: "default/job-1", Written: "42", Seen: "40", Found: true, Waited: time.Second, Err: context.Canceled},
			want: `cache did not catch up with default/job-1 after 1s: wrote resourceVersion "42", the cache has resourceVersion "40": context canceled`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWaitForCacheSyncContextCancelled(t *testing.T) {
	clk := clocktesting.NewFakeClock(cacheSyncEpoch)
	c := &versionCache{clk: clk, versions: []string{"41"}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- reconcile.WaitForCacheSync(ctx, "default/job-1", "42", c.read, reconcile.CacheSyncOptions{Interval: time.Second, Timeout: time.Minute, Clock: clk})
	}()
	require.Eventually(t, clk.HasWaiters, 10*time.Second, time.Millisecond, "the wait never armed its timer")
	clk.Step(500 * time.Millisecond) // time passes, but less than the interval
	cancel()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("WaitForCacheSync did not return after its context was cancelled")
	}
	var got *reconcile.CacheSyncError
	require.ErrorAs(t, err, &got)
	assert.Equal(t, reconcile.CacheSyncError{Object: "default/job-1", Written: "42", Seen: "41", Found: true, Waited: 500 * time.Millisecond, Err: context.Canceled}, *got)
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, err, reconcile.ErrCacheNotSynced)
	assert.Len(t, c.readTimes(), 1)
}

func TestWaitForCacheSyncReadError(t *testing.T) {
	clk := clocktesting.NewFakeClock(cacheSyncEpoch)
	boom := errors.New("no kind is registered for the type")
	c := &versionCache{clk: clk, versions: []string{"41"}, err: boom}
	err := reconcile.WaitForCacheSync(context.Background(), "default/job-1", "42", c.read, reconcile.CacheSyncOptions{Clock: clk})
	require.ErrorIs(t, err, boom)
	assert.NotErrorIs(t, err, reconcile.ErrCacheNotSynced)
	assert.EqualError(t, err, `reading default/job-1 from the cache while waiting for resourceVersion "42": no kind is registered for the type`)
	assert.Len(t, c.readTimes(), 1, "a read error ends the wait at once")
}

func TestWaitForCacheSyncBadInput(t *testing.T) {
	read := func(context.Context) (string, error) { return "1", nil }
	tests := []struct {
		name    string
		written string
		read    reconcile.CacheVersionReader
		opts    reconcile.CacheSyncOptions
		wantMsg string
	}{
		{name: "nil reader", written: "1", wantMsg: "nil CacheVersionReader"},
		{name: "empty written", written: "", read: read, wantMsg: "empty written resourceVersion"},
		{name: "negative interval", written: "1", read: read, opts: reconcile.CacheSyncOptions{Interval: -time.Second}, wantMsg: "CacheSyncOptions.Interval -1s"},
		{name: "negative timeout", written: "1", read: read, opts: reconcile.CacheSyncOptions{Timeout: -time.Second}, wantMsg: "CacheSyncOptions.Timeout -1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := reconcile.WaitForCacheSync(context.Background(), "default/job-1", tt.written, tt.read, tt.opts)
			require.ErrorIs(t, err, reconcile.ErrInvalidArgument)
			assert.ErrorContains(t, err, tt.wantMsg)
		})
	}
}

// TestWaitForCacheSyncRealClock checks the default clock with a cache that a
// separate goroutine updates, as an informer would.
func TestWaitForCacheSyncRealClock(t *testing.T) {
	var mu sync.Mutex
	version := "1"
	go func() {
		for i := 2; i <= 5; i++ {
			time.Sleep(2 * time.Millisecond)
			mu.Lock()
			version = strconv.Itoa(i)
			mu.Unlock()
		}
	}()
	read := func(context.Context) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		return version, nil
	}
	start := time.Now()
	err := reconcile.WaitForCacheSync(context.Background(), "default/job-1", "5", read, reconcile.CacheSyncOptions{Interval: time.Millisecond, Timeout: 5 * time.Second})
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
}

func ExampleWaitForCacheSync() {
	// An informer cache that shows the controller's write on the third read.
	versions := []string{"40", "41", "42"}
	reads := 0
	read := func(context.Context) (string, error) {
		v := versions[min(reads, len(versions)-1)]
		reads++
		return v, nil
	}
	// "42" is the resourceVersion returned by the status update just made.
	err := reconcile.WaitForCacheSync(context.Background(), "runjobs default/job-1", "42", read,
		reconcile.CacheSyncOptions{Interval: time.Millisecond})
	fmt.Println(err, reads)
	// Output: <nil> 3
}

func ExampleWaitForCacheSync_timeout() {
	read := func(context.Context) (string, error) { return "41", nil } // a stuck cache
	err := reconcile.WaitForCacheSync(context.Background(), "runjobs default/job-1", "42", read,
		reconcile.CacheSyncOptions{Interval: time.Millisecond, Timeout: 20 * time.Millisecond})
	var cse *reconcile.CacheSyncError
	if errors.As(err, &cse) {
		fmt.Println(errors.Is(err, reconcile.ErrCacheNotSynced), cse.Object, cse.Written, cse.Seen)
	}
	// Output: true runjobs default/job-1 42 41
}

func ExampleResourceVersionCaughtUp() {
	fmt.Println(reconcile.ResourceVersionCaughtUp("100", "99")) // numeric: 100 >= 99
	fmt.Println(reconcile.ResourceVersionCaughtUp("41", "42"))
	fmt.Println(reconcile.ResourceVersionCaughtUp("v2", "v1")) // opaque: equality only
	// Output:
	// true
	// false
	// false
}

func FuzzResourceVersionCaughtUp(f *testing.F) {
	for _, s := range [][2]string{{"1", "1"}, {"10", "9"}, {"a", "a"}, {"", "1"}, {"042", "42"}, {"18446744073709551616", "1"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, seen, written string) {
		got := reconcile.ResourceVersionCaughtUp(seen, written)
		if written == "" && got {
			t.Fatalf("ResourceVersionCaughtUp(%q, %q) = true, want false for an empty written", seen, written)
		}
		if written != "" && seen == written && !got {
			t.Fatalf("ResourceVersionCaughtUp(%q, %q) = false, want true for equal versions", seen, written)
		}
		s, errS := strconv.ParseUint(seen, 10, 64)
		w, errW := strconv.ParseUint(written, 10, 64)
		if errS == nil && errW == nil {
			if got != (s >= w) {
				t.Fatalf("ResourceVersionCaughtUp(%q, %q) = %v, want %v (numeric)", seen, written, got, s >= w)
			}
			// Numeric versions are totally ordered: one of the two directions holds.
			if !got && !reconcile.ResourceVersionCaughtUp(written, seen) {
				t.Fatalf("neither %q nor %q caught up with the other", seen, written)
			}
		} else if got && seen != written {
			t.Fatalf("ResourceVersionCaughtUp(%q, %q) = true for unequal opaque versions", seen, written)
		}
	})
}

func BenchmarkResourceVersionCaughtUp(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		reconcile.ResourceVersionCaughtUp("123456789", "123456788")
	}
}
