package cloudwatchlogs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"

	"github.com/sluicehq/sluice/sinks"
)

// TestWriteRequest checks what the sink sends: the group's and stream's
// names, each record's Data as message and Timestamp in milliseconds.
func TestWriteRequest(t *testing.T) {
	fake := &fakeLogs{}
	batch := records(3)
	results, err := newFakeSink(t, fake).Write(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		if r.Status != sinks.Accepted {
			t.Errorf("record %d: %v", i, r.Status)
		}
	}
	if puts, creates := fake.counts(); puts != 1 || creates != 0 {
		t.Fatalf("%d puts and %d creates, want 1 and 0", puts, creates)
	}
	in := fake.puts[0]
	if aws.ToString(in.LogGroupName) != "/sluice/events" || aws.ToString(in.LogStreamName) != testStream || in.SequenceToken != nil {
		t.Errorf("sent group %q, stream %q, token %v; want /sluice/events, %s and no token", aws.ToString(in.LogGroupName), aws.ToString(in.LogStreamName), in.SequenceToken, testStream)
	}
	for i, e := range in.LogEvents {
		if aws.ToString(e.Message) != string(batch[i].Data) || aws.ToInt64(e.Timestamp) != batch[i].Timestamp.UnixMilli() {
			t.Errorf("event %d = %q at %d, want %q at %d", i, aws.ToString(e.Message), aws.ToInt64(e.Timestamp), batch[i].Data, batch[i].Timestamp.UnixMilli())
		}
	}
}

// TestWriteSortsAndSplits checks that each call's events are in timestamp
// order and span less than 24 hours, that the calls cover every event once,
// and that the results are in the caller's order.
func TestWriteSortsAndSplits(t *testing.T) {
	at := func(d time.Duration) time.Time { return base.Add(d) }
	tests := []struct {
		name  string
		times []time.Time
		calls [][]int // the records of each call, in order
	}{
		{"sorted", []time.Time{at(0), at(1), at(2)}, [][]int{{0, 1, 2}}},
		{"unsorted", []time.Time{at(3 * time.Hour), at(0), at(time.Hour), at(0)}, [][]int{{1, 3, 2, 0}}},
		{"just under 24 h", []time.Time{at(24*time.Hour - time.Millisecond), at(0)}, [][]int{{1, 0}}},
		{"exactly 24 h", []time.Time{at(0), at(24 * time.Hour)}, [][]int{{0}, {1}}},
		{
			"three days, unsorted",
			[]time.Time{at(47 * time.Hour), at(0), at(25 * time.Hour), at(23 * time.Hour), at(48 * time.Hour), at(time.Hour)},
			[][]int{{1, 5, 3}, {2, 0, 4}},
		},
		{"a day apart each", []time.Time{at(48 * time.Hour), at(24 * time.Hour), at(0)}, [][]int{{2}, {1}, {0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			batch := make([]sinks.Record, len(tt.times))
			for i, ts := range tt.times {
				batch[i] = record(i, ts)
			}
			fake := &fakeLogs{}
			results, err := newFakeSink(t, fake).Write(context.Background(), batch)
			if err != nil {
				t.Fatal(err)
			}
			if len(results) != len(batch) {
				t.Fatalf("%d results for %d records", len(results), len(batch))
			}
			for i, r := range results {
				if r.Status != sinks.Accepted {
					t.Errorf("record %d: %v %s", i, r.Status, r.Code)
				}
			}
			var got [][]int
			for _, in := range fake.puts {
				var call []int
				for _, m := range messages(in) {
					var n int
					fmt.Sscanf(m, `{"n":%d}`, &n)
					call = append(call, n)
				}
				got = append(got, call)
				first, last := in.LogEvents[0].Timestamp, in.LogEvents[len(in.LogEvents)-1].Timestamp
				if span := time.Duration(*last-*first) * time.Millisecond; span >= 24*time.Hour {
					t.Errorf("a call spans %v", span)
				}
				if !slices.IsSortedFunc(in.LogEvents, func(a, b types.InputLogEvent) int { return int(*a.Timestamp - *b.Timestamp) }) {
					t.Errorf("a call's events are not sorted: %v", call)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.calls) {
				t.Errorf("calls %v, want %v", got, tt.calls)
			}
		})
	}
}

// TestWriteRejectedEvents checks that exactly the events of
// rejectedLogEventsInfo are Permanent, with the reason, and that its indices
// are those of the sorted call.
func TestWriteRejectedEvents(t *testing.T) {
	i32 := func(n int32) *int32 { return &n }
	tests := []struct {
		name     string
		rejected *types.RejectedLogEventsInfo
		want     []string // code of each event of the call, in call order; "" accepted
	}{
		{"none", nil, []string{"", "", "", "", ""}},
		{"empty info", &types.RejectedLogEventsInfo{}, []string{"", "", "", "", ""}},
		{"too old", &types.RejectedLogEventsInfo{TooOldLogEventEndIndex: i32(2)}, []string{CodeTooOld, CodeTooOld, "", "", ""}},
		{"too new", &types.RejectedLogEventsInfo{TooNewLogEventStartIndex: i32(3)}, []string{"", "", "", CodeTooNew, CodeTooNew}},
		{"expired", &types.RejectedLogEventsInfo{ExpiredLogEventEndIndex: i32(1)}, []string{CodeExpired, "", "", "", ""}},
		{"too old and expired: too old", &types.RejectedLogEventsInfo{ExpiredLogEventEndIndex: i32(2), TooOldLogEventEndIndex: i32(2)}, []string{CodeTooOld, CodeTooOld, "", "", ""}},
		{
			"all three",
			&types.RejectedLogEventsInfo{ExpiredLogEventEndIndex: i32(3), TooOldLogEventEndIndex: i32(1), TooNewLogEventStartIndex: i32(4)},
			[]string{CodeTooOld, CodeExpired, CodeExpired, "", CodeTooNew},
		},
		{"every event too new", &types.RejectedLogEventsInfo{TooNewLogEventStartIndex: i32(0)}, []string{CodeTooNew, CodeTooNew, CodeTooNew, CodeTooNew, CodeTooNew}},
		{"indices out of range", &types.RejectedLogEventsInfo{TooOldLogEventEndIndex: i32(9), TooNewLogEventStartIndex: i32(-1)}, []string{CodeTooOld, CodeTooOld, CodeTooOld, CodeTooOld, CodeTooOld}},
	}
	// The records in reverse time order, so that call index i is record 4-i.
	batch := make([]sinks.Record, 5)
	for i := range batch {
		batch[i] = record(i, base.Add(time.Duration(len(batch)-i)*time.Minute))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeLogs{putLogEvents: func(ctx context.Context, in *cloudwatchlogs.PutLogEventsInput) (*cloudwatchlogs.PutLogEventsOutput, error) {
				return &cloudwatchlogs.PutLogEventsOutput{RejectedLogEventsInfo: tt.rejected}, nil
			}}
			results, err := newFakeSink(t, fake).Write(context.Background(), batch)
			if err != nil {
				t.Fatal(err)
			}
			for call, code := range tt.want {
				r := results[len(batch)-1-call]
				switch {
				case code == "" && r.Status != sinks.Accepted:
					t.Errorf("event %d of the call: %v %s, want accepted", call, r.Status, r.Code)
				case code != "" && (r.Status != sinks.Permanent || r.Code != code || r.Message == ""):
					t.Errorf("event %d of the call: %v %s %q, want permanent %s with a message", call, r.Status, r.Code, r.Message, code)
				}
			}
		})
	}
}

// TestWriteLaterCallFails checks a Write of two calls whose second fails:
// the first call's results stand and the second's events are Retryable.
func TestWriteLaterCallFails(t *testing.T) {
	batch := []sinks.Record{record(0, base.Add(30*time.Hour)), record(1, base), record(2, base.Add(31*time.Hour))}
	fake := &fakeLogs{}
	fake.putLogEvents = func(ctx context.Context, in *cloudwatchlogs.PutLogEventsInput) (*cloudwatchlogs.PutLogEventsOutput, error) {
		if puts, _ := fake.counts(); puts == 2 {
			return nil, apiError(400, "ThrottlingException", "Rate exceeded")
		}
		return &cloudwatchlogs.PutLogEventsOutput{}, nil
	}
	results, err := newFakeSink(t, fake).Write(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	want := []sinks.Status{sinks.Retryable, sinks.Accepted, sinks.Retryable}
	for i, r := range results {
		if r.Status != want[i] {
			t.Errorf("record %d: %v, want %v", i, r.Status, want[i])
		}
		if r.Status == sinks.Retryable && (r.Code != "ThrottlingException" || r.Message == "") {
			t.Errorf("record %d: code %q message %q, want ThrottlingException and a message", i, r.Code, r.Message)
		}
	}

	// When the first call fails, nothing was stored: a DestinationError, and
	// no second call.
	fake = &fakeLogs{putLogEvents: func(ctx context.Context, in *cloudwatchlogs.PutLogEventsInput) (*cloudwatchlogs.PutLogEventsOutput, error) {
		return nil, apiError(503, "ServiceUnavailableException", "later")
	}}
	results, err = newFakeSink(t, fake).Write(context.Background(), batch)
	if sinks.ClassOf(err) != sinks.ClassUnavailable || results != nil {
		t.Errorf("Write = %v, %v; want an unavailable DestinationError", results, err)
	}
	if puts, _ := fake.counts(); puts != 1 {
		t.Errorf("%d calls after the first failed, want 1", puts)
	}
}

// TestWriteRefuses checks the records CloudWatch Logs would refuse the whole
// call for: Permanent, not sent, and the rest goes out.
func TestWriteRefuses(t *testing.T) {
	max := bytes.Repeat([]byte("x"), limits.MaxRecordBytes-limits.RecordOverhead)
	batch := []sinks.Record{
		{ID: "ok", Data: []byte(`{}`), Timestamp: base},
		{ID: "empty", Data: nil, Timestamp: base},
		{ID: "latin1", Data: []byte("{\"caf\xe9\"}"), Timestamp: base},
		{ID: "no time", Data: []byte(`{}`)},
		{ID: "1969", Data: []byte(`{}`), Timestamp: time.Unix(-1, 0)},
		{ID: "epoch", Data: []byte(`{}`), Timestamp: time.Unix(0, 0)},
	}
	want := []string{"", CodeInvalidMessage, CodeInvalidMessage, CodeInvalidTimestamp, CodeInvalidTimestamp, ""}
	fake := &fakeLogs{}
	results, err := newFakeSink(t, fake).Write(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		switch {
		case want[i] == "" && r.Status != sinks.Accepted:
			t.Errorf("record %s: %v %s, want accepted", batch[i].ID, r.Status, r.Code)
		case want[i] != "" && (r.Status != sinks.Permanent || r.Code != want[i] || r.Message == ""):
			t.Errorf("record %s: %v %s %q, want permanent %s", batch[i].ID, r.Status, r.Code, r.Message, want[i])
		}
	}
	if len(fake.puts) != 2 || len(fake.puts[0].LogEvents)+len(fake.puts[1].LogEvents) != 2 {
		t.Fatalf("%d calls, want two of one event: 1970 and 2026", len(fake.puts))
	}

	// The largest event goes, alone.
	results, err = newFakeSink(t, fake).Write(context.Background(), []sinks.Record{{ID: "max", Data: max, Timestamp: base}})
	if err != nil || results[0].Status != sinks.Accepted || len(fake.puts) != 3 {
		t.Fatalf("Write of the largest event = %v, %v", results, err)
	}
}

// TestWriteRefusesOversizeBatches checks that a batch beyond Limits (the
// call's, or one record's, the 26 bytes of an event counting) fails whole
// with ClassInvalid, unsent.
func TestWriteRefusesOversizeBatches(t *testing.T) {
	exact := make([]sinks.Record, 4) // 1 MiB exactly, 26 bytes counted per event
	for i := range exact {
		exact[i] = sinks.Record{ID: "exact", Data: bytes.Repeat([]byte("x"), limits.MaxBatchBytes/4-limits.RecordOverhead), Timestamp: base}
	}
	tally := limits.Tally()
	for _, r := range exact {
		tally.Add(r)
	}
	if err := tally.Err(); err != nil {
		t.Fatalf("the batch at the limit does not fit: %v", err)
	}
	for name, batch := range map[string][]sinks.Record{
		"10,001 records":   records(10001),
		"1 MiB and 1 byte": append(exact[:4:4], sinks.Record{ID: "x", Timestamp: base}),
		"an event over 1 MiB with its 26 bytes": {{ID: "ok", Data: []byte(`{}`), Timestamp: base},
			{ID: "big", Data: bytes.Repeat([]byte("x"), limits.MaxRecordBytes-limits.RecordOverhead+1), Timestamp: base}},
	} {
		t.Run(name, func(t *testing.T) {
			fake := &fakeLogs{}
			_, err := newFakeSink(t, fake).Write(context.Background(), batch)
			if sinks.ClassOf(err) != sinks.ClassInvalid {
				t.Fatalf("Write = %v, want a DestinationError of class invalid", err)
			}
			if puts, _ := fake.counts(); puts != 0 {
				t.Errorf("%d calls", puts)
			}
		})
	}
}

// TestWriteWholeCallErrors checks the class of each failure of a whole
// PutLogEvents call, and that the sink makes exactly one call.
func TestWriteWholeCallErrors(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		wantClass sinks.Class
	}{
		{"throttled", apiError(400, "ThrottlingException", "Rate exceeded"), sinks.ClassThrottled},
		{"unavailable", apiError(503, "ServiceUnavailableException", "later"), sinks.ClassUnavailable},
		{"internal failure", apiError(500, "InternalFailure", "oops"), sinks.ClassUnavailable},
		{"aborted", apiError(400, "OperationAbortedException", "another change"), sinks.ClassUnavailable},
		{"denied", apiError(400, "AccessDeniedException", "not authorized to perform: logs:PutLogEvents"), sinks.ClassAccessDenied},
		{"unknown key", apiError(400, "UnrecognizedClientException", "The security token included in the request is invalid."), sinks.ClassBadCredentials},
		{"expired token", apiError(400, "ExpiredTokenException", "expired"), sinks.ClassBadCredentials},
		{"invalid parameter", apiError(400, "InvalidParameterException", "Log events in a single PutLogEvents request must be in chronological order."), sinks.ClassInvalid},
		{"no credentials", &sinks.CredentialsError{Err: errors.New("no EC2 IMDS role found")}, sinks.ClassBadCredentials},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeLogs{putLogEvents: func(ctx context.Context, in *cloudwatchlogs.PutLogEventsInput) (*cloudwatchlogs.PutLogEventsOutput, error) {
				return nil, tt.err
			}}
			results, err := newFakeSink(t, fake).Write(context.Background(), records(3))
			if puts, creates := fake.counts(); puts != 1 || creates != 0 {
				t.Errorf("%d puts and %d creates, want 1 and 0", puts, creates)
			}
			var de *sinks.DestinationError
			if !errors.As(err, &de) || results != nil || de.Class != tt.wantClass {
				t.Fatalf("Write = %v, %v; want only a DestinationError of class %s", results, err, tt.wantClass)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("the error does not wrap the SDK's: %v", err)
			}
		})
	}
}

// TestWriteEndedContext checks that a Write ended by its context before
// its first call was answered returns the context's error, not a
// DestinationError; ended between two calls, it returns the first call's
// results, its events stored, and the unsent events Retryable, so that the
// pipeline does not send the stored ones again.
func TestWriteEndedContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	fake := &fakeLogs{}
	fake.putLogEvents = func(ctx context.Context, in *cloudwatchlogs.PutLogEventsInput) (*cloudwatchlogs.PutLogEventsOutput, error) {
		if puts, _ := fake.counts(); puts == 1 {
			cancel() // the second call sees an ended context
			return &cloudwatchlogs.PutLogEventsOutput{}, nil
		}
		return nil, &aws.RequestCanceledError{Err: ctx.Err()}
	}
	batch := []sinks.Record{record(0, base), record(1, base.Add(25*time.Hour))}
	results, err := newFakeSink(t, fake).Write(ctx, batch)
	if err != nil || len(results) != 2 || results[0].Status != sinks.Accepted || results[1].Status != sinks.Retryable {
		t.Fatalf("Write ended between two calls = %v, %v; want the first accepted, the second retryable", results, err)
	}

	results, err = newFakeSink(t, &fakeLogs{}).Write(ctx, batch)
	var de *sinks.DestinationError
	if !errors.Is(err, context.Canceled) || results != nil || errors.As(err, &de) {
		t.Fatalf("Write with an ended context = %v, %v; want context.Canceled", results, err)
	}
}
