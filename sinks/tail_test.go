package sinks_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluicehq/sluice/sinks"
)

// TestTailConfigWaitsFor checks that a reader waits for a missing target
// only when Missing says so, and tells Missing what it is.
func TestTailConfigWaitsFor(t *testing.T) {
	if (sinks.TailConfig{}).WaitsFor("Kinesis stream edge") {
		t.Fatal("WaitsFor without Missing: true, want a missing target to be an error")
	}
	for _, wait := range []bool{false, true} {
		var told []string
		cfg := sinks.TailConfig{Missing: func(what string) bool { told = append(told, what); return wait }}
		if got := cfg.WaitsFor("log group /audit"); got != wait {
			t.Errorf("WaitsFor with a Missing saying %v: %v", wait, got)
		}
		if len(told) != 1 || told[0] != "log group /audit" {
			t.Errorf("Missing told %q, want once the log group", told)
		}
	}
}

// TestTailConfigWait checks that Wait waits Poll while ctx is live, and
// says at once that ctx ended.
func TestTailConfigWait(t *testing.T) {
	cfg := sinks.TailConfig{Poll: 20 * time.Millisecond}
	start := time.Now()
	if !cfg.Wait(t.Context()) {
		t.Fatal("Wait with a live ctx: false")
	}
	if waited := time.Since(start); waited < cfg.Poll {
		t.Errorf("Wait returned after %v, before Poll (%v)", waited, cfg.Poll)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	cfg.Poll = time.Hour
	if cfg.Wait(ctx) {
		t.Fatal("Wait with an ended ctx: true")
	}
}

// TestIgnoreEnd checks that a reader's error is kept while ctx is live and
// is nil once ctx ended.
func TestIgnoreEnd(t *testing.T) {
	failed := errors.New("reading shard 0: throttled")
	if err := sinks.IgnoreEnd(t.Context(), failed); err != failed {
		t.Errorf("IgnoreEnd with a live ctx: %v, want %v", err, failed)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := sinks.IgnoreEnd(ctx, failed); err != nil {
		t.Errorf("IgnoreEnd with an ended ctx: %v, want nil", err)
	}
}
