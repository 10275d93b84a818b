package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/loadgen"
)

// attackTestConfig is what keeps TestServeUnderAttack well under three minutes on
// two cores under -race: every attack of issue 11 at its full width (64
// slow uploads, 64 bodies of 10 MiB, 30 replays) but shorter, and fewer
// resources in the floods. The slow uploads last past the 10 s window of
// the minimum body rate, so that sluice cuts them; the filter bombs stay
// 4 s after the events that set them off (on main, one event and three
// replace filters OOM-killed a 512 MiB container at once); each phase
// measures A 2 s more, past the 1 s by which A's delivery latency may
// exceed its baseline, so that no late delivery falls between phases.
func attackTestConfig() loadgen.AttackConfig {
	return loadgen.AttackConfig{
		// Issue 11's attacks. Issue 23's fan-out (5 million deliveries)
		// and read flood are played by sluice-bench attack, outside
		// -race (docs/performance.md); their guarantees have tests of
		// their own in pipeline, internal/store and internal/api.
		Attacks:      []string{loadgen.AttackLeaks, loadgen.AttackBadJSON, loadgen.AttackForged, loadgen.AttackDedup, loadgen.AttackSlowloris, loadgen.AttackBigBodies, loadgen.AttackFloods, loadgen.AttackFilterBomb},
		Rate:         200,
		Batch:        10,
		Baseline:     5 * time.Second,
		Settle:       2 * time.Second,
		SlowUploads:  64,
		SlowFor:      12 * time.Second,
		SlowEvery:    2 * time.Second,
		BigBodies:    64,
		FloodCount:   20,
		Replays:      30,
		BombFor:      4 * time.Second,
		DrainTimeout: 45 * time.Second,
		// A's requests and B's big bodies wait at most this long for an
		// answer.
		RequestTimeout: 15 * time.Second,
	}
}

// TestServeUnderAttack runs a real `sluice serve --dev --memory-limit
// 460MiB` with two accounts and plays every attack of issue 11 from
// account B while account A publishes 200 events a second into a Kinesis
// destination of the emulator (loadgen.RunAttacks, as `sluice-bench
// attack` does). Each attack is a subtest asserting what must hold during
// it (loadgen.AttackReport.Violations): the process stays up; A's
// POST /events all get 202 within a second; A's delivery latency stays
// within its baseline plus a second; the peak resident memory stays
// within the memory limit plus a quarter; and the attack's own outcome:
// /metrics not on the API listener, no request-controlled host in a
// delivered audit event, no replaced secret in the data dir, duplicate
// names, lone surrogates, 1e999 and forged audit kinds refused, B's
// event reusing A's id stored, 429 with Retry-After (never 503) for B
// over its share, a limit on running replays, the matches filter and the
// oversized server_name refused. The "run" subtest checks that every
// event A was answered 202 for was delivered and the process is up at the
// end.
func TestServeUnderAttack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds sluice and plays every attack of issue 11 against sluice serve --dev for about two minutes")
	}
	clearSluiceEnv(t)
	began := time.Now()
	bin := buildSluice(t)
	// About two minutes once issue 11 is fixed; on main, where the
	// attacks hold the process's memory and CPU, up to five on a loaded
	// machine.
	ctx, cancel := context.WithTimeout(context.Background(), 7*time.Minute)
	defer cancel()
	served, err := spawnAttackServe(ctx, attackSpawn{bin: bin, memoryLimit: defaultAttackMemoryLimit}, testLogWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	defer served.stop()
	report, err := loadgen.RunAttacks(ctx, attackTestConfig(), served.target, testLogWriter{t})
	if err != nil {
		t.Fatalf("%v\nlast lines of sluice:\n%s", err, served.tail())
	}
	var table strings.Builder
	if err := report.Format(&table); err != nil {
		t.Fatal(err)
	}
	t.Logf("run time %s; the report:\n%s", time.Since(began).Round(time.Second), table.String())

	violations := report.Violations()
	check := func(name string) {
		t.Run(name, func(t *testing.T) {
			for _, v := range violations[name] {
				t.Error(v)
			}
		})
	}
	check("baseline")
	for _, name := range attackTestConfig().Attacks {
		if _, played := report.Phase(name); !played {
			t.Errorf("attack %s was not played", name)
			continue
		}
		check(name)
	}
	check("run")
	if len(violations) > 0 {
		t.Logf("last lines of sluice (%s):\n%s", served.state(), served.tail())
	}
}

// testLogWriter writes each line of progress to the test's log.
type testLogWriter struct{ t *testing.T }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
