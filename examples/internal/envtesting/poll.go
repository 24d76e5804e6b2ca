package envtesting

import (
	"fmt"
	"testing"
	"time"
)

// Poll says how long to wait for a state and how often to look. The zero value
// waits 30 s, watches 1.5 s and looks every 25 ms.
type Poll struct {
	// Timeout bounds Until and Eventually.
	Timeout time.Duration
	// Quiet is how long While and Consistently watch.
	Quiet time.Duration
	// Every is the pause between two looks.
	Every time.Duration
}

// The zero Poll's durations.
const (
	DefaultTimeout = 30 * time.Second
	DefaultQuiet   = 1500 * time.Millisecond
	DefaultEvery   = 25 * time.Millisecond
)

func (p Poll) withDefaults() Poll {
	if p.Timeout <= 0 {
		p.Timeout = DefaultTimeout
	}
	if p.Quiet <= 0 {
		p.Quiet = DefaultQuiet
	}
	if p.Every <= 0 {
		p.Every = DefaultEvery
	}
	return p
}

// Until calls cond until it holds, and at least once; after Timeout it returns
// an error that holds the last description cond gave. cond runs on the caller's
// goroutine, so it may fail the test.
func (p Poll) Until(cond func() (bool, string)) error {
	p = p.withDefaults()
	deadline := time.Now().Add(p.Timeout)
	for {
		ok, desc := cond()
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %v: %s", p.Timeout, desc)
		}
		time.Sleep(p.Every)
	}
}

// While calls cond for Quiet, and at least once; it returns an error with cond's
// description at the first call where cond does not hold.
func (p Poll) While(cond func() (bool, string)) error {
	p = p.withDefaults()
	for deadline := time.Now().Add(p.Quiet); ; time.Sleep(p.Every) {
		if ok, desc := cond(); !ok {
			return fmt.Errorf("no longer true: %s", desc)
		}
		if !time.Now().Before(deadline) {
			return nil
		}
	}
}

// Eventually is Until that fails the test, naming what it waited for.
func (p Poll) Eventually(t testing.TB, what string, cond func() (bool, string)) {
	t.Helper()
	if err := p.Until(cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// Consistently is While that fails the test, naming what stopped holding.
func (p Poll) Consistently(t testing.TB, what string, cond func() (bool, string)) {
	t.Helper()
	if err := p.While(cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
