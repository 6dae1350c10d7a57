package main

import (
	"strings"
	"testing"
	"time"
)

// fakeClock advances by step on every reading.
type fakeClock struct {
	t    time.Time
	step time.Duration
}

func (c *fakeClock) now() time.Time { c.t = c.t.Add(c.step); return c.t }

func TestProgressPrinter(t *testing.T) {
	for _, tc := range []struct {
		name string
		step time.Duration
		want string
	}{
		// Fast work prints nothing at all.
		{"fast", 100 * time.Millisecond, ""},
		// Slow work: \r-rewritten lines from the first call past one
		// second, finished by the elapsed time and a newline.
		{"slow", 600 * time.Millisecond, "\rbestk: 1/3 concurrencies\rbestk: 2/3 concurrencies\rbestk: 3/3 concurrencies in 2.4s\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			clock := &fakeClock{step: tc.step}
			p := newProgress(&b, true, "bestk", "concurrencies", clock.now)
			for done := range 4 {
				p(done, 3)
			}
			if b.String() != tc.want {
				t.Errorf("progress wrote %q, want %q", b.String(), tc.want)
			}
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
				t.Errorf("progress line not ended by a newline: %q", b.String())
			}
		})
	}
}

// TestProgressPlain: into a file, plain lines no closer than
// progressPlainEvery and never a carriage return.
func TestProgressPlain(t *testing.T) {
	var b strings.Builder
	clock := &fakeClock{step: 2 * time.Second}
	// Readings at 2 s (start), 4, 6, 8, 10, 12 s: a line at 4 s (past one
	// second, none before), the next at 10 s (6 s later), then the end.
	p := newProgress(&b, false, "sweep", "topologies", clock.now)
	for done := range 5 {
		p(done, 4)
	}
	want := "sweep: 0/4 topologies\nsweep: 3/4 topologies\nsweep: 4/4 topologies in 10.0s\n"
	if b.String() != want {
		t.Errorf("progress wrote %q, want %q", b.String(), want)
	}
	if strings.Contains(b.String(), "\r") {
		t.Error("carriage return written into a file")
	}
	if isTerminal(&b) {
		t.Error("a strings.Builder taken for a terminal")
	}
}
