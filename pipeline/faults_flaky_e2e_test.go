package pipeline_test

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
)

// flakyFaults returns the fault of each target's resource: throttling
// for TestFaultsThrottled, 5xx and latency for TestFaultsServerErrors.
type flakyFaults func(d emulatorTarget) emulator.Fault

// runFlaky delivers n events into a Kinesis stream, a Firehose delivery
// stream and a CloudWatch log group, each injecting the fault faults gives
// it, and checks that every event arrives in each, exactly once, and that
// the emulator's counters agree. It returns the emulator's counters of the
// put operation of each target, for checks of the faults' own.
func runFlaky(t *testing.T, name string, n int, faults flakyFaults) map[emulator.Service]emulator.OperationCounters {
	t.Helper()
	f := startFaultEnv(t, pipeline.DeliveryConfig{})
	targets := f.allTargets(t, name)
	var destIDs []string
	for _, d := range targets {
		if err := f.emu.SetFault(faults(d)); err != nil {
			t.Fatal(err)
		}
		destIDs = append(destIDs, d.dest.ID)
	}
	sub := f.subscribe(t, destIDs, store.Source{Type: tcpKind})

	start := time.Now()
	ids := f.publishNow(t, tcpKind, n, nil)
	for _, d := range targets {
		f.waitAccepted(t, d, int64(n), 2*time.Minute)
	}
	waitAllAckedWithin(t, f.deliveryEnv, 30*time.Second)
	t.Logf("%d events published and delivered to 3 destinations in %v", n, time.Since(start).Round(time.Millisecond))

	out := map[emulator.Service]emulator.OperationCounters{}
	for _, d := range targets {
		c := count(ids, f.received(t, d, sub.ID))
		puts := f.puts(d)
		out[d.service] = puts
		t.Logf("%s: %v; %s: %d calls, %d refused whole, %d records accepted, %d records refused one by one",
			d, c, putOperation(d.service), puts.Calls, puts.Errors, puts.RecordsAccepted, puts.RecordsFailed)
		if c.missing > 0 || c.duplicates > 0 || c.unexpected > 0 {
			t.Errorf("%s: %v: want every event once", d, c)
		}
		// Every record the emulator accepted is one the destination
		// holds: none was sent again after it was accepted.
		if puts.RecordsAccepted != int64(c.out) {
			t.Errorf("%s: the emulator counted %d records accepted, and holds %d", d, puts.RecordsAccepted, c.out)
		}
	}
	return out
}

// TestFaultsThrottled throttles 30% of the records of every Kinesis and
// Firehose call, and 30% of the CloudWatch Logs calls (which has no
// per-record failures), for throttledEvents (20,000; 5,000 under the race
// detector) events into each: every event arrives once in each
// destination, so no record a destination accepted was sent again.
func TestFaultsThrottled(t *testing.T) {
	if testing.Short() {
		t.Skip("delivers tens of thousands of records through a throttling emulator")
	}
	t.Parallel()
	puts := runFlaky(t, "throttled", throttledEvents, func(d emulatorTarget) emulator.Fault {
		fault := emulator.Fault{Service: d.service, Resource: d.resource, ThrottleRecords: 0.3}
		if d.service == emulator.ServiceLogs {
			fault = emulator.Fault{Service: d.service, Resource: d.resource, ThrottleRequests: 0.3}
		}
		return fault
	})
	// The faults were injected: records (calls, for CloudWatch Logs)
	// were refused and sent again.
	for _, svc := range []emulator.Service{emulator.ServiceKinesis, emulator.ServiceFirehose} {
		if puts[svc].RecordsFailed == 0 {
			t.Errorf("%s: no record was throttled", svc)
		}
	}
	if puts[emulator.ServiceLogs].Errors == 0 {
		t.Errorf("%s: no call was throttled", emulator.ServiceLogs)
	}
}

// TestFaultsServerErrors answers 20% of the calls of every destination
// with a 5xx, and every call 100 ms late, for 20,000 events into each:
// every event arrives once in each destination. Not fewer under the race
// detector: the emulator's draws are seeded, and with 5,000 events the
// Kinesis destination, taking them 500 a call on an idle machine, made
// 14 calls, none of which the draws failed.
func TestFaultsServerErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("delivers 60,000 records through a failing, slow emulator")
	}
	t.Parallel()
	puts := runFlaky(t, "failing", 20_000, func(d emulatorTarget) emulator.Fault {
		return emulator.Fault{Service: d.service, Resource: d.resource, ServerErrors: 0.2, Latency: 100 * time.Millisecond}
	})
	for svc, p := range puts {
		if p.Errors == 0 {
			t.Errorf("%s: no call failed", svc)
		}
	}
}
