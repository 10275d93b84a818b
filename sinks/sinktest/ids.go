package sinktest

import (
	"context"
	"sync"

	"github.com/sluicehq/sluice/sinks"
)

// IDsByData wraps the sink of a destination that keeps no record IDs
// (Firehose, CloudWatch Logs): it remembers the ID of each record written,
// by its Data, so that a Destination's ReadAll can give the records it reads
// back their IDs. Within one destination of the suite, no two records have
// the same Data. It is safe for concurrent use.
type IDsByData struct {
	sinks.Sink

	mu  sync.Mutex
	ids map[string]string
}

// NewIDsByData returns sink, remembering the IDs of what it writes.
func NewIDsByData(sink sinks.Sink) *IDsByData {
	return &IDsByData{Sink: sink, ids: make(map[string]string)}
}

// Write remembers each record's ID by its Data, then writes the records.
func (w *IDsByData) Write(ctx context.Context, records []sinks.Record) ([]sinks.Result, error) {
	w.mu.Lock()
	for _, r := range records {
		w.ids[string(r.Data)] = r.ID
	}
	w.mu.Unlock()
	return w.Sink.Write(ctx, records)
}

// Record returns the record of Data read back from the destination, with
// the ID it was written with, or no ID if none was written with that Data.
func (w *IDsByData) Record(data []byte) sinks.Record {
	w.mu.Lock()
	defer w.mu.Unlock()
	return sinks.Record{ID: w.ids[string(data)], Data: data}
}
