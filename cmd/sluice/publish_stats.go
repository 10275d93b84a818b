package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// lockedWriter serializes the writes of several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// publishStats counts events as they are sent. It is safe for concurrent use.
type publishStats struct {
	start      time.Time
	sent       atomic.Int64 // events in requests sent
	stored     atomic.Int64
	duplicates atomic.Int64
	rejected   atomic.Int64 // events in requests the API refused
	retries    atomic.Int64
}

func newPublishStats(start time.Time) *publishStats {
	return &publishStats{start: start}
}

// accepted returns the events the API accepted: stored or duplicates.
func (s *publishStats) accepted() int64 { return s.stored.Load() + s.duplicates.Load() }

// reportEvery writes a progress line to w every interval until ctx ends or
// the returned stop is called; stop returns once the reporting stopped.
func (s *publishStats) reportEvery(ctx context.Context, interval time.Duration, w io.Writer) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		last, lastAccepted := time.Now(), int64(0)
		for {
			select {
			case <-ctx.Done():
				return
			case <-done:
				return
			case now := <-ticker.C:
				accepted := s.accepted()
				rate := float64(accepted-lastAccepted) / now.Sub(last).Seconds()
				last, lastAccepted = now, accepted
				fmt.Fprintf(w, "sent %d  stored %d  duplicates %d  rejected %d  %.0f events/s\n",
					s.sent.Load(), s.stored.Load(), s.duplicates.Load(), s.rejected.Load(), rate)
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// summary writes the final line.
func (s *publishStats) summary(w io.Writer, now time.Time) {
	elapsed := now.Sub(s.start)
	var b strings.Builder
	fmt.Fprintf(&b, "sent %s in %s: %d stored, %s, %d rejected",
		count(s.sent.Load(), "event", "events"), elapsed.Round(time.Millisecond), s.stored.Load(),
		count(s.duplicates.Load(), "duplicate", "duplicates"), s.rejected.Load())
	if n := s.retries.Load(); n > 0 {
		b.WriteString(", " + count(n, "retry", "retries"))
	}
	if secs := elapsed.Seconds(); secs > 0 {
		fmt.Fprintf(&b, " (%.0f events/s)", float64(s.accepted())/secs)
	}
	fmt.Fprintln(w, b.String())
}
