package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/client"
)

// defaultReplayPoll is how often `subscriptions replay --wait` asks how the
// replay goes: the API's figures change about once a second.
const defaultReplayPoll = time.Second

// replayWait is how `subscriptions replay --wait` waits for a replay.
type replayWait struct {
	poll    time.Duration // between two reads of the replay
	timeout time.Duration // zero: as long as it takes
}

// validate checks the flags of the wait.
func (w replayWait) validate() error {
	if w.poll <= 0 {
		return fmt.Errorf("--interval %s is not a positive duration: give one such as 1s", w.poll)
	}
	if w.timeout < 0 {
		return fmt.Errorf("--timeout %s is negative: give how long to wait, such as 10m, or 0 to wait as long as it takes", w.timeout)
	}
	return nil
}

// waitReplay reads the replay of the answer started every w.poll until
// it is done, and returns the answer that says so; meanwhile it shows its progress on progress.
// It returns an error, saying the replay goes on, when a read fails, ctx
// ends (Ctrl-C) or w.timeout passes.
func waitReplay(ctx context.Context, replays client.Replays, a answer[apiwire.Replay], w replayWait, progress *progressLine) (answer[apiwire.Replay], error) {
	started := a.v
	var expired <-chan time.Time
	if w.timeout > 0 {
		timer := time.NewTimer(w.timeout)
		defer timer.Stop()
		expired = timer.C
	}
	ticker := time.NewTicker(w.poll)
	defer ticker.Stop()
	see := fmt.Sprintf("see it with `sluice subscriptions replays %s %s`", started.SubscriptionID, started.ID)
	for {
		progress.show(replayProgress(a.v))
		if a.v.State == "done" {
			progress.end()
			return a, nil
		}
		select {
		case <-ctx.Done():
			progress.end()
			return a, fmt.Errorf("stopped waiting for replay %s; it goes on: %s", started.ID, see)
		case <-expired:
			progress.end()
			return a, fmt.Errorf("replay %s is not done after %s (--timeout); it goes on: %s, or wait longer", started.ID, w.timeout, see)
		case <-ticker.C:
		}
		next, err := answerOf(func(opts ...client.CallOption) (apiwire.Replay, error) {
			return replays.Get(ctx, started.ID, opts...)
		})
		if err != nil && ctx.Err() != nil {
			continue // interrupted: said above
		}
		if err == nil && next.err != nil {
			err = fmt.Errorf("the API's answer is not a replay: %w", next.err)
		}
		if err != nil {
			progress.end()
			return a, fmt.Errorf("waiting for replay %s: %w; the replay goes on: %s", started.ID, err, see)
		}
		a = next
	}
}

// replayProgress is the line that says how far a replay is, such as
// "replay rpl_...: 1,234 of 5,000 events (24%)".
func replayProgress(r apiwire.Replay) string {
	line := fmt.Sprintf("replay %s: %s of %s events", r.ID, groupDigits(r.EventsReplayed), groupDigits(r.EventsTotal))
	if r.EventsTotal > 0 {
		line += fmt.Sprintf(" (%d%%)", min(r.EventsReplayed, r.EventsTotal)*100/r.EventsTotal)
	}
	if r.State == "done" {
		line += ", done"
	}
	return line
}

// groupDigits writes n with a comma between groups of three digits:
// 1,234,567.
func groupDigits(n uint64) string {
	digits := strconv.FormatUint(n, 10)
	out := make([]byte, 0, len(digits)+len(digits)/3)
	for i := range len(digits) {
		if i > 0 && (len(digits)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, digits[i])
	}
	return string(out)
}

// progressLine shows a line that changes: on a terminal it is written
// over in place; elsewhere (a file, a pipe, a CI log) each change is a
// line of its own, and a line that did not change is not written again.
type progressLine struct {
	w        io.Writer
	terminal bool
	last     string
	open     bool // a line is on the terminal without its newline
}

// newProgressLine returns a progress line on w, written over in place if
// w is a terminal.
func newProgressLine(w io.Writer) *progressLine {
	f, ok := w.(*os.File)
	return &progressLine{w: w, terminal: ok && isTerminal(f)}
}

// show shows line, if it changed.
func (p *progressLine) show(line string) {
	if line == p.last {
		return
	}
	p.last = line
	if !p.terminal {
		fmt.Fprintln(p.w, line)
		return
	}
	// Back to the start of the line, and clear what the last one left.
	fmt.Fprint(p.w, "\r"+line+"\x1b[K")
	p.open = true
}

// end ends the line on a terminal, so that what follows starts on a line
// of its own.
func (p *progressLine) end() {
	if p.open {
		fmt.Fprintln(p.w)
		p.open = false
	}
}

// errNoWaitFlags says that --timeout or --interval was given without --wait.
var errNoWaitFlags = errors.New("--timeout and --interval say how to wait for the replay: give --wait with them")
