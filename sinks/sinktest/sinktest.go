package sinktest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/sinks"
)

// Destination is one sink under test and a way to read back its
// destination.
type Destination struct {
	// Sink writes to a destination no other Destination shares.
	Sink sinks.Sink
	// ReadAll returns every record stored in the destination so far, in
	// any order, with the ID and Data it was written with (its Timestamp
	// need not be set).
	ReadAll func(t *testing.T) []sinks.Record
}

// writeTimeout bounds every Write of the suite.
const writeTimeout = time.Minute

// promptly is how soon a Write with an ended context must return.
const promptly = 5 * time.Second

// Run runs the conformance suite, calling newDestination for a fresh, empty
// destination in each subtest. A sink passes when:
//
//   - its Limits are consistent and do not change;
//   - an empty batch returns no results and no error;
//   - a batch of Limits.MaxRecords records, and one of exactly
//     Limits.MaxBatchBytes bytes in records of up to Limits.MaxRecordBytes,
//     are accepted whole;
//   - a batch beyond Limits (a record over Limits.MaxRecordBytes, or one
//     record more than Limits.MaxRecords) fails whole with a
//     *sinks.DestinationError of sinks.ClassInvalid, and nothing of it is
//     stored;
//   - a Write returns one Result per record, and every record it accepted is
//     read back once, with its ID and byte-identical Data;
//   - a Write with a cancelled or expired context returns that context's
//     error within seconds;
//   - concurrent Writes all succeed, and race detection finds nothing.
func Run(t *testing.T, newDestination func(t *testing.T) Destination) {
	t.Helper()
	tests := []struct {
		name string
		test func(t *testing.T, d Destination)
	}{
		{"Limits", testLimits},
		{"EmptyBatch", testEmptyBatch},
		{"OneRecord", testOneRecord},
		{"MaxRecords", testMaxRecords},
		{"MaxBatchBytes", testMaxBatchBytes},
		{"BeyondLimits", testBeyondLimits},
		{"DataByteIdentical", testDataByteIdentical},
		{"CancelledContext", testCancelledContext},
		{"ExpiredContext", testExpiredContext},
		{"ConcurrentWrites", testConcurrentWrites},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.test(t, newDestination(t))
		})
	}
}

func testLimits(t *testing.T, d Destination) {
	l := d.Sink.Limits()
	switch {
	case l.MaxRecords < 1:
		t.Errorf("MaxRecords = %d, want at least 1", l.MaxRecords)
	case l.MaxRecordBytes < 1:
		t.Errorf("MaxRecordBytes = %d, want at least 1", l.MaxRecordBytes)
	case l.MaxBatchBytes < l.MaxRecordBytes:
		t.Errorf("MaxBatchBytes = %d, less than MaxRecordBytes = %d: a record of the largest size fits no batch", l.MaxBatchBytes, l.MaxRecordBytes)
	case l.RecordOverhead < 0:
		t.Errorf("RecordOverhead = %d, want at least 0", l.RecordOverhead)
	}
	if again := d.Sink.Limits(); again != l {
		t.Errorf("Limits changed from %+v to %+v", l, again)
	}
}

func testEmptyBatch(t *testing.T, d Destination) {
	results, err := write(t, d.Sink, nil)
	if err != nil || len(results) != 0 {
		t.Fatalf("Write of no records = %v, %v; want no results and no error", results, err)
	}
}

func testOneRecord(t *testing.T, d Destination) {
	batch := []sinks.Record{record("one-0", 100)}
	writeAccepted(t, d.Sink, batch)
	checkStored(t, d, batch)
}

func testMaxRecords(t *testing.T, d Destination) {
	l := d.Sink.Limits()
	size := min(200, l.MaxBatchBytes/l.MaxRecords, l.MaxRecordBytes)
	batch := make([]sinks.Record, l.MaxRecords)
	for i := range batch {
		batch[i] = recordOfSize(l, fmt.Sprintf("maxrecords-%05d", i), size)
	}
	writeAccepted(t, d.Sink, batch)
	checkStored(t, d, batch)
}

func testMaxBatchBytes(t *testing.T, d Destination) {
	l := d.Sink.Limits()
	n := (l.MaxBatchBytes + l.MaxRecordBytes - 1) / l.MaxRecordBytes
	if n > l.MaxRecords {
		t.Fatalf("MaxBatchBytes = %d needs %d records of MaxRecordBytes = %d, more than MaxRecords = %d", l.MaxBatchBytes, n, l.MaxRecordBytes, l.MaxRecords)
	}
	batch := make([]sinks.Record, n)
	total := 0
	for i := range batch {
		// Spread the bytes evenly; the first records take the remainder.
		size := l.MaxBatchBytes / n
		if i < l.MaxBatchBytes%n {
			size++
		}
		batch[i] = recordOfSize(l, fmt.Sprintf("maxbytes-%03d", i), size)
		total += l.Size(batch[i])
	}
	if total != l.MaxBatchBytes {
		t.Fatalf("the suite built a batch of %d bytes, not %d", total, l.MaxBatchBytes)
	}
	writeAccepted(t, d.Sink, batch)
	checkStored(t, d, batch)
}

func testBeyondLimits(t *testing.T, d Destination) {
	l := d.Sink.Limits()
	tooMany := make([]sinks.Record, l.MaxRecords+1)
	for i := range tooMany {
		tooMany[i] = record(fmt.Sprintf("toomany-%05d", i), 20)
	}
	for name, batch := range map[string][]sinks.Record{
		"a record too large": {record("small-0", 100), recordOfSize(l, "toolarge-0", l.MaxRecordBytes+1)},
		"a record too many":  tooMany,
	} {
		_, err := write(t, d.Sink, batch)
		var de *sinks.DestinationError
		if !errors.As(err, &de) || de.Class != sinks.ClassInvalid {
			t.Errorf("Write of a batch with %s = %v, want a *sinks.DestinationError of class %s", name, err, sinks.ClassInvalid)
		}
	}
	checkStored(t, d, nil)
}

func testDataByteIdentical(t *testing.T, d Destination) {
	payloads := []string{
		`{}`,
		`{"a":1}`,
		`{"unicode":"héllo wörld ✓ 日本語 🚀"}`,
		`{"escapes":"quote \" backslash \\ newline \n tab \t nul \u0000"}`,
		`{"separators":"\u2028\u2029"}`,
		`{"html":"<script>&amp;</script>"}`,
		`{"space":"  leading and trailing  "}`,
		`{"n":1e300,"neg":-0,"arr":[1,[2,[3]]],"null":null,"t":true}`,
	}
	batch := make([]sinks.Record, len(payloads))
	for i, p := range payloads {
		batch[i] = sinks.Record{ID: fmt.Sprintf("bytes-%02d", i), Data: []byte(p), Timestamp: time.Now()}
	}
	writeAccepted(t, d.Sink, batch)
	checkStored(t, d, batch)
}

func testCancelledContext(t *testing.T, d Destination) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	checkEndedContext(t, d.Sink, ctx, context.Canceled)
}

func testExpiredContext(t *testing.T, d Destination) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	checkEndedContext(t, d.Sink, ctx, context.DeadlineExceeded)
}

func checkEndedContext(t *testing.T, sink sinks.Sink, ctx context.Context, want error) {
	t.Helper()
	start := time.Now()
	_, err := sink.Write(ctx, []sinks.Record{record("ended-0", 100)})
	if elapsed := time.Since(start); elapsed > promptly {
		t.Errorf("Write with an ended context took %v, want under %v", elapsed, promptly)
	}
	if !errors.Is(err, want) {
		t.Errorf("Write with an ended context returned %v, want %v", err, want)
	}
}

func testConcurrentWrites(t *testing.T, d Destination) {
	const writers, batches, perBatch = 8, 4, 25
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		written []sinks.Record
	)
	for w := range writers {
		wg.Go(func() {
			for b := range batches {
				batch := make([]sinks.Record, perBatch)
				for i := range batch {
					batch[i] = record(fmt.Sprintf("concurrent-%d-%d-%02d", w, b, i), 64+i)
				}
				if !writeAcceptedNoFatal(t, d.Sink, batch) {
					return
				}
				mu.Lock()
				written = append(written, batch...)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	checkStored(t, d, written)
}

// record returns a record whose Data is a JSON object of n bytes or a
// little more (at least its ID's length).
func record(id string, n int) sinks.Record {
	prefix := `{"id":"` + id + `","pad":"`
	pad := max(0, n-len(prefix)-2)
	data := prefix + strings.Repeat("x", pad) + `"}`
	return sinks.Record{ID: id, Data: []byte(data), Timestamp: time.Now()}
}

// recordOfSize returns a record whose size by l is exactly size.
func recordOfSize(l sinks.Limits, id string, size int) sinks.Record {
	r := sinks.Record{ID: id}
	r = record(id, size-l.Size(r))
	return r
}

// write writes batch with the suite's timeout.
func write(t *testing.T, sink sinks.Sink, batch []sinks.Record) ([]sinks.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	return sink.Write(ctx, batch)
}

// writeAccepted writes batch and fails the test unless every record was
// accepted.
func writeAccepted(t *testing.T, sink sinks.Sink, batch []sinks.Record) {
	t.Helper()
	if !writeAcceptedNoFatal(t, sink, batch) {
		t.FailNow()
	}
}

// writeAcceptedNoFatal writes batch and reports whether every record was
// accepted, marking the test failed otherwise; it is safe to call from
// goroutines other than the test's.
func writeAcceptedNoFatal(t *testing.T, sink sinks.Sink, batch []sinks.Record) bool {
	t.Helper()
	results, err := write(t, sink, batch)
	if err != nil {
		t.Errorf("Write of %d records: %v", len(batch), err)
		return false
	}
	if len(results) != len(batch) {
		t.Errorf("Write of %d records returned %d results", len(batch), len(results))
		return false
	}
	ok := true
	for i, r := range results {
		if r.Status != sinks.Accepted {
			t.Errorf("record %d (%s) of %d: %v %s %s, want accepted", i, batch[i].ID, len(batch), r.Status, r.Code, r.Message)
			ok = false
		}
	}
	return ok
}

// checkStored checks that the destination holds exactly the records of
// want, once each, with their IDs and byte-identical Data.
func checkStored(t *testing.T, d Destination, want []sinks.Record) {
	t.Helper()
	got := d.ReadAll(t)
	byID := make(map[string][]byte, len(want))
	for _, r := range want {
		byID[r.ID] = r.Data
	}
	seen := make(map[string]bool, len(got))
	for _, r := range got {
		data, ok := byID[r.ID]
		switch {
		case !ok:
			t.Errorf("read back a record with ID %q that was not written", r.ID)
		case seen[r.ID]:
			t.Errorf("read back the record %q twice", r.ID)
		case !bytes.Equal(r.Data, data):
			t.Errorf("record %q read back as %s, written as %s", r.ID, abbreviate(r.Data), abbreviate(data))
		}
		seen[r.ID] = true
	}
	for _, r := range want {
		if !seen[r.ID] {
			t.Errorf("record %q was accepted but is not in the destination", r.ID)
		}
	}
}

// abbreviate returns data, cut to a length a test log can show.
func abbreviate(data []byte) string {
	const most = 200
	if len(data) <= most {
		return fmt.Sprintf("%q", data)
	}
	return fmt.Sprintf("%q... (%d bytes)", data[:most], len(data))
}
