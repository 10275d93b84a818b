package pipeline_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
)

// The outage of TestFaultsAccessDenied, and how soon the other destination
// must deliver each event published meanwhile. The outage and sluice
// serve's retry settings are scaled down outageScale times, every ratio
// between them kept (the outage lasts four retry budgets, as two minutes
// last four of 30 s): the test proves what it did with the defaults in a
// sixth of the time.
const (
	outageScale     = 6
	outage          = 2 * time.Minute / outageScale
	healthyLatency  = 5 * time.Second
	recoveryTimeout = 90 * time.Second
)

// callsPerDelivery returns the most calls one delivery of a batch makes to
// a destination that refuses every call: the worker's backoff (a
// retry.Policy spread from half to one and a half times each interval)
// waits at least half of each interval, and the worker stops trying once
// the retry budget is spent.
func callsPerDelivery(cfg pipeline.DeliveryConfig) int {
	policy := pipeline.DeliveryRetry(cfg)
	calls, interval, elapsed := 0, policy.Initial, time.Duration(0)
	for {
		calls++
		if elapsed >= cfg.RetryBudget {
			return calls
		}
		elapsed += interval / 2
		interval = policy.Next(interval)
	}
}

// maxOutageCalls bounds the calls a route makes to a destination refusing
// every call for d: its worker delivers one batch at a time, a failing
// delivery lasts at least the retry budget, so at most d/budget deliveries
// fit within the outage, and two more overlap its ends.
func maxOutageCalls(cfg pipeline.DeliveryConfig, d time.Duration) int {
	return (int(d/cfg.RetryBudget) + 2) * callsPerDelivery(cfg)
}

// TestFaultsAccessDenied makes a Kinesis stream answer AccessDenied for
// four retry budgets while events flow to it and to another stream of the
// same account, through one subscription, with the retry settings of
// sluice serve scaled down (outageScale). During the outage the calls to
// the denied stream stay within what the backoff allows, and the other
// stream receives each event within a few seconds; after the fix, every
// event reaches the denied stream.
func TestFaultsAccessDenied(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an outage of four retry budgets")
	}
	t.Parallel()
	// sluice serve's retry settings, the defaults, and its AckWait,
	// scaled down together.
	cfg := pipeline.DeliveryConfig{
		RetryInitial: pipeline.DefaultRetryInitial / outageScale,
		RetryMax:     pipeline.DefaultRetryMax / outageScale,
		RetryBudget:  pipeline.DefaultRetryBudget / outageScale,
		NakDelayMax:  pipeline.DefaultNakDelayMax / outageScale,
		AckWait:      pipeline.DefaultAckWait / outageScale,
	}
	f := startFaultEnv(t, cfg)
	denied := f.target(t, emulator.ServiceKinesis, "denied")
	healthy := f.target(t, emulator.ServiceKinesis, "healthy")
	sub := f.subscribe(t, []string{denied.dest.ID, healthy.dest.ID}, store.Source{Type: tcpKind})

	pub := f.startPublishing(tcpKind, 5, 100*time.Millisecond) // 50 events a second
	f.waitAccepted(t, denied, 50, 10*time.Second)
	f.waitAccepted(t, healthy, 50, 10*time.Second)

	before := f.puts(denied)
	if err := f.emu.SetFault(emulator.Fault{Service: emulator.ServiceKinesis, Resource: denied.resource, AccessDenied: true}); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	pause(f.ctx, outage) // the outage, while the publisher goes on
	during := f.puts(denied)
	f.emu.ClearFault(emulator.ServiceKinesis, denied.resource)
	fixed := time.Now()
	events := pub.end(t)
	ids := idsOf(events)
	if c, err := f.stream.Consumer(f.ctx, pipeline.ConsumerName(sub.ID, denied.dest.ID)); err != nil {
		t.Error(err)
	} else if info, err := c.Info(f.ctx); err != nil {
		t.Error(err)
	} else {
		t.Logf("%s at the fix: %d events published, %d pending, %d handed out and not acknowledged, %d handed out again",
			denied, len(ids), info.NumPending, info.NumAckPending, info.NumRedelivered)
	}

	calls, refused := during.Calls-before.Calls, during.Errors-before.Errors
	bound := maxOutageCalls(cfg, fixed.Sub(down))
	t.Logf("outage of %v: %d calls to %s, %d refused; the backoff allows at most %d (%d a delivery)",
		fixed.Sub(down).Round(time.Millisecond), calls, denied, refused, bound, callsPerDelivery(cfg))
	if refused == 0 {
		t.Errorf("no call was refused during the outage")
	}
	if calls > int64(bound) {
		t.Errorf("%d calls during the outage, more than the %d the backoff allows", calls, bound)
	}

	// The other destination delivered each event published during the
	// outage within a few seconds.
	f.waitAccepted(t, healthy, int64(len(ids)), 30*time.Second)
	got := f.received(t, healthy, sub.ID)
	var latencies []time.Duration
	for _, ev := range events {
		if ev.at.Before(down) || ev.at.After(fixed) {
			continue
		}
		if at, ok := got.arrival[ev.id]; ok {
			latencies = append(latencies, at.Sub(ev.at))
		}
	}
	slices.Sort(latencies)
	c := count(ids, got)
	t.Logf("%s: %v; the %d events published during the outage arrived within %v (median %v, 99th percentile %v)",
		healthy, c, len(latencies), latencies[len(latencies)-1].Round(time.Millisecond),
		latencies[len(latencies)/2].Round(time.Millisecond), latencies[len(latencies)*99/100].Round(time.Millisecond))
	if c.missing > 0 || c.unexpected > 0 {
		t.Errorf("%s: %v", healthy, c)
	}
	if worst := latencies[len(latencies)-1]; worst > healthyLatency {
		t.Errorf("%s: an event published during the outage took %v to arrive, more than %v", healthy, worst, healthyLatency)
	}

	// After the fix, every event reaches the denied stream.
	deadline := fixed.Add(recoveryTimeout)
	for {
		c = count(ids, f.received(t, denied, sub.ID))
		if c.missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v, %v after the fix", denied, c, recoveryTimeout)
		}
		time.Sleep(250 * time.Millisecond) // polling the emulator, with a deadline
	}
	recovered := time.Since(fixed)
	t.Logf("%s: %v; everything delivered %v after the fix", denied, c, recovered.Round(time.Millisecond))
	// Nothing timed out or crashed: no event is delivered twice.
	if c.duplicates > 0 || c.unexpected > 0 {
		t.Errorf("%s: %v", denied, c)
	}
	waitAllAckedWithin(t, f.deliveryEnv, 30*time.Second)
}
