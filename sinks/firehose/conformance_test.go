package firehose_test

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/sluicehq/sluice/internal/awstest"
	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/firehose"
	"github.com/sluicehq/sluice/sinks/sinktest"
)

// TestConformance runs the sink conformance suite against the emulator, one
// new delivery stream per subtest.
func TestConformance(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{})
	var streams atomic.Int64
	sinktest.Run(t, func(t *testing.T) sinktest.Destination {
		name := fmt.Sprintf("conformance-%d", streams.Add(1))
		if err := emu.CreateDeliveryStream(name); err != nil {
			t.Fatal(err)
		}
		sink := sinktest.NewIDsByData(newSink(t, emu, name))
		return sinktest.Destination{
			Sink:    sink,
			ReadAll: func(t *testing.T) []sinks.Record { return readAll(t, emu, name, sink) },
		}
	})
}

// newSink returns a sink of the emulator's delivery stream name.
func newSink(t *testing.T, emu *emulatortest.Emulator, name string) *firehose.Sink {
	t.Helper()
	sink, err := firehose.New(context.Background(), firehose.Config{
		DeliveryStreamARN: fmt.Sprintf("arn:aws:firehose:%s:%s:deliverystream/%s", emu.Region, emulator.DefaultAccountID, name),
		Auth:              sinks.AWSAuth{AccessKeyID: emulatortest.AccessKeyID, SecretAccessKey: emulatortest.SecretAccessKey},
		Endpoint:          emu.Endpoint,
		HTTPClient:        awstest.HTTPClient(t),
	})
	if err != nil {
		t.Fatalf("firehose.New: %v", err)
	}
	return sink
}

// readAll returns the records a delivery stream received, each without its
// newline, which it checks is there, and with the ID it was written with.
func readAll(t *testing.T, emu *emulatortest.Emulator, name string, ids *sinktest.IDsByData) []sinks.Record {
	t.Helper()
	stored, dropped, err := emu.FirehoseRecords(name)
	if err != nil || dropped != 0 {
		t.Fatalf("reading delivery stream %s: %v (%d dropped)", name, err, dropped)
	}
	var records []sinks.Record
	for _, r := range stored {
		data, ok := bytes.CutSuffix(r.Data, []byte("\n"))
		if !ok {
			t.Errorf("record %.60q does not end with a newline", r.Data)
		}
		records = append(records, ids.Record(data))
	}
	return records
}
