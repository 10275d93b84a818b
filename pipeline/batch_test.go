package pipeline_test

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/sinks"
)

// The limits of the batch tests: Kinesis PutRecords and CloudWatch Logs
// PutLogEvents, as docs/architecture.md#sinks has them.
var (
	batchKinesis = sinks.Limits{MaxRecords: 500, MaxBatchBytes: 5 << 20, MaxRecordBytes: 1 << 20, CountID: true}
	batchLogs    = sinks.Limits{MaxRecords: 10_000, MaxBatchBytes: 1_048_576, MaxRecordBytes: 1_048_576 - 26, RecordOverhead: 26}
)

// batchT0 is the time of the first Add of the batch tests.
var batchT0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// newRecordBatch returns a batch of records sized by limits.Size.
func newRecordBatch(limits sinks.Limits, linger time.Duration) *pipeline.Batch[sinks.Record] {
	return pipeline.NewBatch(limits, linger, limits.Size)
}

// batchRecord returns a record whose Size under limits is size.
func batchRecord(limits sinks.Limits, size int) sinks.Record {
	id := "ev_2YqAbCdEfGhIjKlMnOpQrStUvWx"
	n := size - limits.RecordOverhead
	if limits.CountID {
		n -= len(id)
	}
	r := sinks.Record{ID: id, Data: []byte(strings.Repeat("x", n))}
	if limits.Size(r) != size {
		panic(fmt.Sprintf("no record of size %d under %+v", size, limits))
	}
	return r
}

func TestBatchLimits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limits sinks.Limits
		sizes  []int // of the records added, all accepted
		refuse int   // the size of a record then refused
		full   bool  // whether the batch is then full (ready at once)
	}{
		{"records: 500 then a 501st", batchKinesis, repeat(100, 500), 100, true},
		{"records: 499 and room", batchKinesis, repeat(100, 499), 0, false},
		{"bytes: exactly 5 MiB", batchKinesis, repeat(1<<20, 5), 60, true},
		{"bytes: 31 short of 5 MiB, 32 refused", batchKinesis, append(repeat(1<<20, 4), 1<<20-31), 32, false},
		{"bytes: 31 short of 5 MiB, 31 accepted", batchKinesis, append(repeat(1<<20, 4), 1<<20-31, 31), 31, true},
		{"logs: 26 bytes per event count", batchLogs, repeat(1_048_576/16, 16), 26, true},
		{"logs: 10,000 events", batchLogs, repeat(100, 10_000), 100, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newRecordBatch(tc.limits, time.Second)
			total := 0
			for i, size := range tc.sizes {
				if !b.Add(batchT0, batchRecord(tc.limits, size)) {
					t.Fatalf("Add of record %d (size %d, batch at %d bytes) refused", i, size, total)
				}
				total += size
			}
			if b.Len() != len(tc.sizes) || b.Bytes() != total {
				t.Fatalf("Len, Bytes = %d, %d; want %d, %d", b.Len(), b.Bytes(), len(tc.sizes), total)
			}
			if tc.refuse > 0 {
				r := batchRecord(tc.limits, tc.refuse)
				if !b.Fits(r) {
					t.Fatalf("Fits(size %d) = false", tc.refuse)
				}
				if b.Add(batchT0, r) {
					t.Fatalf("Add of a record of %d bytes to %d records of %d bytes: accepted", tc.refuse, b.Len(), b.Bytes())
				}
				if b.Len() != len(tc.sizes) || b.Bytes() != total {
					t.Fatal("a refused Add changed the batch")
				}
			}
			if got := b.Ready(batchT0); got != tc.full {
				t.Errorf("Ready before the linger = %v, want %v", got, tc.full)
			}
			if got := b.Take(); len(got) != len(tc.sizes) {
				t.Errorf("Take returned %d records, want %d", len(got), len(tc.sizes))
			}
		})
	}
}

func repeat(size, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = size
	}
	return s
}

func TestBatchRecordSize(t *testing.T) {
	for _, limits := range []sinks.Limits{batchKinesis, batchLogs} {
		b := newRecordBatch(limits, time.Second)
		largest := batchRecord(limits, limits.MaxRecordBytes)
		tooLarge := batchRecord(limits, limits.MaxRecordBytes+1)
		if !b.Fits(largest) || b.Fits(tooLarge) {
			t.Errorf("%+v: Fits(MaxRecordBytes), Fits(MaxRecordBytes+1) = %v, %v; want true, false", limits, b.Fits(largest), b.Fits(tooLarge))
		}
		if b.Add(batchT0, tooLarge) || b.Len() != 0 {
			t.Errorf("%+v: an empty batch accepted a record over MaxRecordBytes", limits)
		}
		if !b.Add(batchT0, largest) {
			t.Errorf("%+v: an empty batch refused a record of MaxRecordBytes", limits)
		}
	}
	// A record within MaxRecordBytes but over MaxBatchBytes never fits.
	limits := sinks.Limits{MaxRecords: 10, MaxBatchBytes: 100, MaxRecordBytes: 1000}
	b := newRecordBatch(limits, time.Second)
	if r := batchRecord(limits, 101); b.Fits(r) || b.Add(batchT0, r) {
		t.Error("a record over MaxBatchBytes fits")
	}
}

func TestBatchLinger(t *testing.T) {
	const linger = 200 * time.Millisecond
	b := newRecordBatch(batchKinesis, linger)
	if _, ok := b.Deadline(); ok || b.Ready(batchT0.Add(time.Hour)) {
		t.Fatal("an empty batch has a deadline or is ready")
	}
	b.Add(batchT0, batchRecord(batchKinesis, 100))
	b.Add(batchT0.Add(150*time.Millisecond), batchRecord(batchKinesis, 100))
	if d, ok := b.Deadline(); !ok || !d.Equal(batchT0.Add(linger)) {
		t.Fatalf("Deadline = %v, %v; want the first record's time and the linger", d, ok)
	}
	for _, tc := range []struct {
		at   time.Duration
		want bool
	}{{0, false}, {linger - time.Nanosecond, false}, {linger, true}, {time.Hour, true}} {
		if got := b.Ready(batchT0.Add(tc.at)); got != tc.want {
			t.Errorf("Ready at +%v = %v, want %v", tc.at, got, tc.want)
		}
	}
	if got := b.Take(); len(got) != 2 {
		t.Fatalf("Take = %d records, want 2", len(got))
	}
	if _, ok := b.Deadline(); ok || b.Len() != 0 || b.Bytes() != 0 {
		t.Fatal("Take left the batch not empty")
	}
	later := batchT0.Add(time.Minute)
	b.Add(later, batchRecord(batchKinesis, 100))
	if d, _ := b.Deadline(); !d.Equal(later.Add(linger)) {
		t.Errorf("Deadline after Take = %v, want %v", d, later.Add(linger))
	}
	b.Take()
	if got := b.Take(); len(got) != 0 {
		t.Error("Take of an empty batch returned records")
	}
}

func TestBatchNoLinger(t *testing.T) {
	b := newRecordBatch(batchKinesis, 0)
	b.Add(batchT0, batchRecord(batchKinesis, 100))
	if !b.Ready(batchT0) {
		t.Error("a batch without linger is not ready at once")
	}
}

func TestBatchNoLimits(t *testing.T) {
	b := pipeline.NewBatch(sinks.Limits{}, time.Second, func(n int) int { return n })
	for range 10_000 {
		if !b.Add(batchT0, 1<<30) {
			t.Fatal("a batch without limits refused an item")
		}
	}
	if b.Ready(batchT0) {
		t.Error("a batch without limits is full")
	}
}

// FuzzBatch drives a batch as the delivery worker does, with items of any
// size arriving at any time, and checks that no batch taken ever breaks a
// limit, that every item that fits is delivered once and in order, and that
// Ready and Deadline agree.
func FuzzBatch(f *testing.F) {
	f.Add(uint16(500), uint32(5<<20), uint32(1<<20), []byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(uint16(3), uint32(100), uint32(60), []byte("a fuzz of many sizes and times, to break a limit"))
	f.Add(uint16(1), uint32(10), uint32(10), []byte{10, 0, 9, 1, 11, 0})
	f.Fuzz(func(t *testing.T, maxRecords uint16, maxBatch, maxRecord uint32, script []byte) {
		limits := sinks.Limits{MaxRecords: int(maxRecords%1000) + 1, MaxBatchBytes: int(maxBatch%(8<<20)) + 1, MaxRecordBytes: int(maxRecord%(2<<20)) + 1}
		const linger = 200 * time.Millisecond
		type item struct{ seq, size int }
		b := pipeline.NewBatch(limits, linger, func(it item) int { return it.size })
		now := batchT0
		var fitting, delivered []int
		take := func() {
			batch := b.Take()
			if len(batch) == 0 {
				t.Fatal("took an empty batch")
			}
			bytes := 0
			for _, it := range batch {
				if it.size > limits.MaxRecordBytes {
					t.Fatalf("item of %d bytes over MaxRecordBytes %d", it.size, limits.MaxRecordBytes)
				}
				bytes += it.size
				delivered = append(delivered, it.seq)
			}
			if len(batch) > limits.MaxRecords || bytes > limits.MaxBatchBytes {
				t.Fatalf("batch of %d items, %d bytes over limits %+v", len(batch), bytes, limits)
			}
		}
		for seq := 0; len(script) >= 3; seq++ {
			size := int(binary.LittleEndian.Uint16(script)) * max(1, limits.MaxBatchBytes>>16)
			now = now.Add(time.Duration(script[2]) * 5 * time.Millisecond)
			script = script[3:]
			ready := b.Ready(now)
			d, ok := b.Deadline()
			lingered := ok && !now.Before(d)
			full := b.Len() >= limits.MaxRecords || b.Bytes() >= limits.MaxBatchBytes
			if ready != (lingered || full) {
				t.Fatalf("Ready = %v with deadline %v at %v, %d items, %d bytes under %+v", ready, d, now, b.Len(), b.Bytes(), limits)
			}
			if ready {
				take()
			}
			it := item{seq, size}
			if !b.Fits(it) {
				continue // dead-lettered
			}
			fitting = append(fitting, seq)
			if !b.Add(now, it) {
				take()
				if !b.Add(now, it) {
					t.Fatalf("an empty batch refused an item that fits: %d bytes under %+v", size, limits)
				}
			}
		}
		if b.Len() > 0 {
			take()
		}
		if fmt.Sprint(delivered) != fmt.Sprint(fitting) {
			t.Fatalf("delivered %v, want %v", delivered, fitting)
		}
	})
}

// ExampleBatch shows the loop of a delivery worker around a batch: it adds
// records until one is refused or the batch is ready, then sends it.
func ExampleBatch() {
	limits := sinks.Limits{MaxRecords: 2, MaxBatchBytes: 1 << 20, MaxRecordBytes: 100}
	batch := pipeline.NewBatch(limits, 200*time.Millisecond, limits.Size)
	send := func(records []sinks.Record) { fmt.Println("send", len(records), "records") }

	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, data := range []string{`{"a":1}`, `{"b":2}`, `{"c":3}`, strings.Repeat("x", 200)} {
		r := sinks.Record{ID: "ev_1", Data: []byte(data)}
		if !batch.Fits(r) {
			fmt.Println("dead-letter a record of", len(data), "bytes")
			continue
		}
		if !batch.Add(now, r) {
			send(batch.Take())
			batch.Add(now, r)
		}
		if batch.Ready(now) {
			send(batch.Take())
		}
	}
	deadline, _ := batch.Deadline()
	fmt.Println("the worker's timer fires in", deadline.Sub(now))
	if batch.Ready(deadline) {
		send(batch.Take())
	}
	// Output:
	// send 2 records
	// dead-letter a record of 200 bytes
	// the worker's timer fires in 200ms
	// send 1 records
}
