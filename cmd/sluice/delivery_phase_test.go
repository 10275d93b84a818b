package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
)

// phaseDelivery is what a phase of the outage test measured at the
// healthy destination.
type phaseDelivery struct {
	events        int           // selected events published
	window        time.Duration // the throughput's window
	throughput    float64       // events a second arriving in the window
	p50, p95, p99 time.Duration // latency from the first sending of an event's batch to its arrival
}

func (d phaseDelivery) String() string {
	return fmt.Sprintf("%d selected events, %.0f events/s delivered over %s, latency p50 %s p95 %s p99 %s",
		d.events, d.throughput, d.window.Round(10*time.Millisecond), d.p50.Round(time.Millisecond), d.p95.Round(time.Millisecond), d.p99.Round(time.Millisecond))
}

// measurePhase publishes outagePhase of events at outageRate, waits until
// every selected one reached stream, and measures their delivery.
func measurePhase(t *testing.T, emu *emulatortest.Emulator, stream string, servers *serverSet) phaseDelivery {
	t.Helper()
	events := newCrashEvents(int(outagePhase.Seconds() * outageRate))
	pub := startPacedPublisher(t, servers, events, outageBatch, outageRate)
	if err := pub.wait(outagePhase + 30*time.Second); err != nil {
		t.Fatalf("publishing: %v", err)
	}
	var arrivals map[string]time.Time
	pollUntil(t, 30*time.Second, 100*time.Millisecond, "every selected event of the phase delivered", func() bool {
		arrivals = firstArrivals(t, emu, stream)
		return countSelected(arrivalSet(arrivals), events) == selectedIn(events)
	})
	first, _ := pub.firstSent(0)
	last, _ := pub.firstSent(len(events) - 1)
	from := first.Add(time.Second)
	d := phaseDelivery{events: selectedIn(events), window: last.Sub(from)}
	var latencies []time.Duration
	inWindow := 0
	for i, ev := range events {
		if !ev.selected {
			continue
		}
		arrived := arrivals[ev.id]
		sent, _ := pub.firstSent(i)
		latencies = append(latencies, arrived.Sub(sent))
		if !arrived.Before(from) && !arrived.After(last) {
			inWindow++
		}
	}
	d.throughput = float64(inWindow) / d.window.Seconds()
	d.p50, d.p95, d.p99 = percentile(latencies, 0.5), percentile(latencies, 0.95), percentile(latencies, 0.99)
	return d
}

// arrivalSet turns arrival times into counts by event id, for countSelected.
func arrivalSet(arrivals map[string]time.Time) map[string]int {
	got := make(map[string]int, len(arrivals))
	for id := range arrivals {
		got[id] = 1
	}
	return got
}
