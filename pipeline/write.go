package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/sinks"
)

// verdict is what became of one record of a batch written: the sink's
// result, and for a Permanent record the class of its dead letter,
// dlqPermanent (the sink refused it) or dlqTooLarge (it was not sent).
type verdict struct {
	sinks.Result
	class string
}

// written is the outcome of one write of a batch: a verdict per record
// with the indexes of the records accepted, to send again and refused for
// good, and err when the call failed as a whole: then no record was
// stored, those sent are to send again and only those refused unsent (too
// large) are refused for good. The worker, redrive and the destination
// test differ only in what they do with it.
type written struct {
	err                        error
	verdicts                   []verdict
	accepted, retry, permanent []int // indexes in the batch
	// sent and bytes are the records sent to the sink and their size
	// against its limits; took is how long the call took.
	sent, bytes int
	took        time.Duration
}

// write writes a batch to sink in one call: the delivery engine's only
// way to a sink. It refuses the records over the sink's MaxRecordBytes
// without sending them, and fails the call as a whole when the sink
// answers another number of results than records. entryOf gives each
// item's record and size.
//
// write returns the sink's answer even when ctx ended during the call: the
// records the sink accepted then are stored, and the caller settles them.
func write[T any](ctx context.Context, sink sinks.Sink, batch []T, entryOf func(T) entry) written {
	limits := sink.Limits()
	w := written{verdicts: make([]verdict, len(batch))}
	records := make([]sinks.Record, 0, len(batch))
	sent := make([]int, 0, len(batch)) // the index in batch of each record sent
	for i, item := range batch {
		e := entryOf(item)
		if e.size > limits.MaxRecordBytes {
			w.verdicts[i] = verdict{class: dlqTooLarge, Result: sinks.Result{Status: sinks.Permanent,
				Message: fmt.Sprintf("the record is %d bytes; the destination takes at most %d", e.size, limits.MaxRecordBytes)}}
			continue
		}
		records = append(records, e.record)
		sent = append(sent, i)
		w.bytes += e.size
	}
	w.sent = len(records)
	if len(records) > 0 {
		began := time.Now()
		results, err := sink.Write(ctx, records)
		w.took = time.Since(began)
		if err == nil && len(results) != len(records) {
			err = fmt.Errorf("the sink answered %d results for %d records", len(results), len(records))
		}
		if err != nil {
			// No record was stored: the records sent are to be sent
			// again, and those refused unsent stay refused.
			failed := written{err: err, verdicts: w.verdicts, sent: w.sent, bytes: w.bytes, took: w.took}
			for i := range failed.verdicts {
				if failed.verdicts[i].class == dlqTooLarge {
					failed.permanent = append(failed.permanent, i)
				} else {
					failed.verdicts[i] = verdict{Result: sinks.Result{Status: sinks.Retryable}}
					failed.retry = append(failed.retry, i)
				}
			}
			return failed
		}
		for j, r := range results {
			v := verdict{Result: r}
			if r.Status == sinks.Permanent {
				v.class = dlqPermanent
			}
			w.verdicts[sent[j]] = v
		}
	}
	for i, v := range w.verdicts {
		switch v.Status {
		case sinks.Accepted:
			w.accepted = append(w.accepted, i)
		case sinks.Permanent:
			w.permanent = append(w.permanent, i)
		default:
			w.retry = append(w.retry, i)
		}
	}
	return w
}

// lastRefused returns the result of the last record the sink did not
// accept, or nil.
func (w *written) lastRefused() *sinks.Result {
	var last *sinks.Result
	for i := range w.verdicts {
		if v := &w.verdicts[i]; v.Status != sinks.Accepted && v.class != dlqTooLarge {
			last = &v.Result
		}
	}
	return last
}

// entryOf returns e: the entryOf of write for a batch of entries.
func entryOf(e entry) entry { return e }
