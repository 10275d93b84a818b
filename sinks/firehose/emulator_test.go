package firehose_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
	"github.com/sluicehq/sluice/sinks"
)

// TestThrottledRecordsEmulator writes through a delivery stream throttling
// and failing a third of the records, resending only those the sink says
// are Retryable as the pipeline does: every record arrives, once.
func TestThrottledRecordsEmulator(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{Seed: 5})
	if err := emu.CreateDeliveryStream("throttled"); err != nil {
		t.Fatal(err)
	}
	if err := emu.SetFault(emulator.Fault{Service: emulator.ServiceFirehose, Resource: "throttled", ThrottleRecords: 0.2, FailRecords: 0.1}); err != nil {
		t.Fatal(err)
	}
	sink := newSink(t, emu, "throttled")
	const n = 2000
	pending := make([]sinks.Record, n)
	for i := range pending {
		pending[i] = sinks.Record{ID: fmt.Sprintf("ev-%04d", i), Data: fmt.Appendf(nil, `{"event_id":"ev-%04d"}`, i)}
	}
	retried := 0
	for attempt := 0; len(pending) > 0; attempt++ {
		if attempt == 50 {
			t.Fatalf("%d records still pending after %d attempts", len(pending), attempt)
		}
		var again []sinks.Record
		for batch := range chunks(pending, sink.Limits().MaxRecords) {
			results, err := sink.Write(context.Background(), batch)
			if err != nil {
				t.Fatalf("Write: %v", err)
			}
			for i, r := range results {
				switch r.Status {
				case sinks.Retryable:
					if r.Code != "ServiceUnavailableException" && r.Code != "InternalFailure" {
						t.Errorf("record %s: code %q", batch[i].ID, r.Code)
					}
					again = append(again, batch[i])
				case sinks.Permanent:
					t.Fatalf("record %s: permanent %s", batch[i].ID, r.Code)
				}
			}
		}
		retried += len(again)
		pending = again
	}
	if retried == 0 {
		t.Fatal("no record was throttled: the fault did not apply")
	}
	stored, _, err := emu.FirehoseRecords("throttled")
	if err != nil {
		t.Fatal(err)
	}
	seen := make(map[string]int)
	for _, r := range stored {
		seen[string(r.Data)]++
	}
	for i := range n {
		if got := seen[fmt.Sprintf("{\"event_id\":\"ev-%04d\"}\n", i)]; got != 1 {
			t.Errorf("ev-%04d stored %d times, want once", i, got)
		}
	}
	if len(stored) != n {
		t.Errorf("%d records stored, want %d", len(stored), n)
	}
}

// chunks yields records in batches of at most size.
func chunks(records []sinks.Record, size int) func(yield func([]sinks.Record) bool) {
	return func(yield func([]sinks.Record) bool) {
		for len(records) > 0 {
			n := min(size, len(records))
			if !yield(records[:n]) {
				return
			}
			records = records[n:]
		}
	}
}

// TestDestinationErrorsEmulator checks the class of whole-call failures as
// the emulator answers them, and that a fixed destination works again.
func TestDestinationErrorsEmulator(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{})
	if err := emu.CreateDeliveryStream("events"); err != nil {
		t.Fatal(err)
	}
	batch := []sinks.Record{{ID: "ev-1", Data: []byte(`{"event_id":"ev-1"}`)}}
	tests := []struct {
		name  string
		fault emulator.Fault
		want  sinks.Class
		code  string
	}{
		{"access denied", emulator.Fault{AccessDenied: true}, sinks.ClassAccessDenied, "AccessDeniedException"},
		{"not found", emulator.Fault{NotFound: true}, sinks.ClassNotFound, "ResourceNotFoundException"},
		{"5xx", emulator.Fault{ServerErrors: 1}, sinks.ClassUnavailable, "InternalFailure"},
		{"throttled", emulator.Fault{ThrottleRequests: 1}, sinks.ClassThrottled, "ServiceUnavailableException"},
	}
	sink := newSink(t, emu, "events")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fault.Service, tt.fault.Resource = emulator.ServiceFirehose, "events"
			if err := emu.SetFault(tt.fault); err != nil {
				t.Fatal(err)
			}
			_, err := sink.Write(context.Background(), batch)
			var de *sinks.DestinationError
			if !errors.As(err, &de) || de.Class != tt.want || de.Code != tt.code {
				t.Errorf("Write = %v, want class %s, code %s", err, tt.want, tt.code)
			}
			emu.ClearFault(emulator.ServiceFirehose, "events")
			results, err := sink.Write(context.Background(), batch)
			if err != nil || results[0].Status != sinks.Accepted {
				t.Errorf("Write once fixed = %v, %v", results, err)
			}
		})
	}
	t.Run("no such delivery stream", func(t *testing.T) {
		_, err := newSink(t, emu, "never-created").Write(context.Background(), batch)
		if sinks.ClassOf(err) != sinks.ClassNotFound {
			t.Errorf("Write = %v, want not_found", err)
		}
	})
}

// TestRecordTooLargeEmulator checks that a record of 1,000 KiB with its
// newline reaches the delivery stream, and that a batch with a larger one
// fails whole, unsent: the pipeline refuses such a record before the sink.
func TestRecordTooLargeEmulator(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{})
	if err := emu.CreateDeliveryStream("events"); err != nil {
		t.Fatal(err)
	}
	max := sinks.Record{ID: "max", Data: bytes.Repeat([]byte("x"), 1000<<10-1)}
	big := sinks.Record{ID: "big", Data: bytes.Repeat([]byte("y"), 1000<<10)}
	sink := newSink(t, emu, "events")
	if _, err := sink.Write(context.Background(), []sinks.Record{max, big}); sinks.ClassOf(err) != sinks.ClassInvalid {
		t.Fatalf("Write with a record too large = %v, want a DestinationError of class invalid", err)
	}
	results, err := sink.Write(context.Background(), []sinks.Record{max})
	if err != nil {
		t.Fatal(err)
	}
	if results[0].Status != sinks.Accepted {
		t.Fatalf("results %+v, want the largest accepted", results)
	}
	stored, _, _ := emu.FirehoseRecords("events")
	if len(stored) != 1 || len(stored[0].Data) != 1000<<10 {
		t.Fatalf("%d records stored, want the largest alone", len(stored))
	}
}
