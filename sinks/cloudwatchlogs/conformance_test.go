package cloudwatchlogs_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/sluicehq/sluice/internal/awstest"
	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/cloudwatchlogs"
	"github.com/sluicehq/sluice/sinks/sinktest"
)

// stream is the log stream of the emulator tests: a subscription's id.
const stream = "esb_2mE3conformance"

// TestConformance runs the sink conformance suite against the emulator, one
// new log group per subtest, whose log stream the sink creates.
func TestConformance(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{})
	var groups atomic.Int64
	sinktest.Run(t, func(t *testing.T) sinktest.Destination {
		group := fmt.Sprintf("/sluice/conformance-%d", groups.Add(1))
		if err := emu.CreateLogGroup(group, 0); err != nil {
			t.Fatal(err)
		}
		sink := sinktest.NewIDsByData(newSink(t, emu, group).WithLogStream(stream))
		return sinktest.Destination{
			Sink:    sink,
			ReadAll: func(t *testing.T) []sinks.Record { return readAll(t, emu, group, stream, sink) },
		}
	})
}

// newSink returns the sink of the emulator's log group, with no log stream.
func newSink(t *testing.T, emu *emulatortest.Emulator, group string) *cloudwatchlogs.Sink {
	t.Helper()
	sink, err := cloudwatchlogs.New(context.Background(), cloudwatchlogs.Config{
		LogGroupARN: fmt.Sprintf("arn:aws:logs:%s:%s:log-group:%s:*", emu.Region, emulator.DefaultAccountID, group),
		Auth:        sinks.AWSAuth{AccessKeyID: emulatortest.AccessKeyID, SecretAccessKey: emulatortest.SecretAccessKey},
		Endpoint:    emu.Endpoint,
		HTTPClient:  awstest.HTTPClient(t),
	})
	if err != nil {
		t.Fatalf("cloudwatchlogs.New: %v", err)
	}
	return sink
}

// readAll returns the events of a log stream as records, with the IDs they
// were written with; none when the stream does not exist yet.
func readAll(t *testing.T, emu *emulatortest.Emulator, group, stream string, ids *sinktest.IDsByData) []sinks.Record {
	t.Helper()
	events, err := emu.LogEvents(group, stream)
	if errors.Is(err, emulator.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatalf("reading log stream %s of %s: %v", stream, group, err)
	}
	records := make([]sinks.Record, len(events))
	for i, e := range events {
		records[i] = ids.Record([]byte(e.Message))
	}
	return records
}
