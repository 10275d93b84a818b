package emulator_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"

	"github.com/sluicehq/sluice/internal/emulator"
)

// TestLogEventsOrder puts batches whose timestamps overlap, as the batches
// of a route do (each sorted, the next starting before the last ended),
// and reads the stream back by timestamp, events of the same timestamp in
// the order they were put, whether it is read between the puts or only at
// the end, and with the oldest dropped past MaxStoredRecords or
// MaxStoredBytes.
func TestLogEventsOrder(t *testing.T) {
	// Batch b has 5 events "b.i", a second apart, starting 2 s after
	// batch b-1 started: each overlaps the one before and shares
	// timestamps with it.
	const batches, perBatch = 6, 5
	stamp := func(b, i int) int64 { return logsNow.Add(-time.Hour + time.Duration(2*b+i)*time.Second).UnixMilli() }
	batch := func(b int) []types.InputLogEvent {
		out := make([]types.InputLogEvent, perBatch)
		for i := range out {
			out[i] = types.InputLogEvent{Timestamp: aws.Int64(stamp(b, i)), Message: aws.String(fmt.Sprintf("%d.%d", b, i))}
		}
		return out
	}
	// kept is what the stream must keep: each event put goes after those
	// of a timestamp not after its own; after each call, the oldest go
	// while more than maxRecords or maxBytes are kept.
	kept := func(maxRecords int, maxBytes int64) []string {
		type event struct {
			ts      int64
			message string
		}
		var stream []event
		var bytes int64
		for b := range batches {
			for i := range perBatch {
				e := event{stamp(b, i), fmt.Sprintf("%d.%d", b, i)}
				at := len(stream)
				for at > 0 && stream[at-1].ts > e.ts {
					at--
				}
				stream = slices.Insert(stream, at, e)
				bytes += int64(len(e.message))
			}
			for len(stream) > maxRecords || bytes > maxBytes {
				bytes -= int64(len(stream[0].message))
				stream = stream[1:]
			}
		}
		var out []string
		for _, e := range stream {
			out = append(out, e.message)
		}
		return out
	}
	tests := []struct {
		name       string
		maxRecords int
		maxBytes   int64 // the messages are 3 bytes each
		readEach   bool  // read the stream after each put, too
	}{
		{name: "read at the end", maxRecords: 1000, maxBytes: 1000},
		{name: "read after each put", maxRecords: 1000, maxBytes: 1000, readEach: true},
		{name: "oldest dropped", maxRecords: 7, maxBytes: 1000},
		{name: "oldest dropped, read after each put", maxRecords: 7, maxBytes: 1000, readEach: true},
		{name: "oldest dropped by size", maxRecords: 1000, maxBytes: 20},
		{name: "oldest dropped by size, read after each put", maxRecords: 1000, maxBytes: 20, readEach: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			emu, client := startLogs(t, emulator.Config{AutoCreate: true, MaxStoredRecords: tt.maxRecords, MaxStoredBytes: tt.maxBytes})
			for b := range batches {
				if _, err := client.PutLogEvents(t.Context(), &cloudwatchlogs.PutLogEventsInput{
					LogGroupName: aws.String("g"), LogStreamName: aws.String("s"), LogEvents: batch(b),
				}); err != nil {
					t.Fatalf("PutLogEvents %d: %v", b, err)
				}
				if tt.readEach {
					if _, err := emu.LogEvents("g", "s"); err != nil {
						t.Fatalf("LogEvents: %v", err)
					}
				}
			}
			events, err := emu.LogEvents("g", "s")
			if err != nil {
				t.Fatalf("LogEvents: %v", err)
			}
			var got []string
			for _, e := range events {
				got = append(got, e.Message)
			}
			want := kept(tt.maxRecords, tt.maxBytes)
			if !slices.Equal(got, want) {
				t.Errorf("LogEvents\n got %v\nwant %v", got, want)
			}
			page, err := client.GetLogEvents(t.Context(), &cloudwatchlogs.GetLogEventsInput{
				LogGroupName: aws.String("g"), LogStreamName: aws.String("s"), StartFromHead: aws.Bool(true),
			})
			if err != nil {
				t.Fatalf("GetLogEvents: %v", err)
			}
			got = got[:0]
			for _, e := range page.Events {
				got = append(got, aws.ToString(e.Message))
			}
			if !slices.Equal(got, want) {
				t.Errorf("GetLogEvents\n got %v\nwant %v", got, want)
			}
		})
	}
}
