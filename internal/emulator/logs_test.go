package emulator_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"

	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
)

// logsNow is the clock of the CloudWatch Logs tests.
var logsNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func startLogs(t *testing.T, cfg emulator.Config) (*emulatortest.Emulator, *cloudwatchlogs.Client) {
	t.Helper()
	cfg.Now = func() time.Time { return logsNow }
	emu := emulatortest.Start(t, cfg)
	return emu, emu.LogsClient()
}

func events(stamps ...time.Time) []types.InputLogEvent {
	out := make([]types.InputLogEvent, len(stamps))
	for i, ts := range stamps {
		out[i] = types.InputLogEvent{Timestamp: aws.Int64(ts.UnixMilli()), Message: aws.String(fmt.Sprintf("event %d", i))}
	}
	return out
}

func TestLogsRoundTrip(t *testing.T) {
	emu, client := startLogs(t, emulator.Config{})
	ctx := t.Context()
	group, stream := aws.String("/sluice/audit"), aws.String("sub_1")

	_, err := client.CreateLogStream(ctx, &cloudwatchlogs.CreateLogStreamInput{LogGroupName: group, LogStreamName: stream})
	wantAPIError(t, err, "ResourceNotFoundException", 400)
	if _, err := client.CreateLogGroup(ctx, &cloudwatchlogs.CreateLogGroupInput{LogGroupName: group}); err != nil {
		t.Fatalf("CreateLogGroup: %v", err)
	}
	_, err = client.CreateLogGroup(ctx, &cloudwatchlogs.CreateLogGroupInput{LogGroupName: group})
	wantAPIError(t, err, "ResourceAlreadyExistsException", 400)
	_, err = client.PutLogEvents(ctx, &cloudwatchlogs.PutLogEventsInput{LogGroupName: group, LogStreamName: stream, LogEvents: events(logsNow)})
	wantAPIError(t, err, "ResourceNotFoundException", 400)
	if _, err := client.CreateLogStream(ctx, &cloudwatchlogs.CreateLogStreamInput{LogGroupName: group, LogStreamName: stream}); err != nil {
		t.Fatalf("CreateLogStream: %v", err)
	}
	_, err = client.CreateLogStream(ctx, &cloudwatchlogs.CreateLogStreamInput{LogGroupName: group, LogStreamName: stream})
	wantAPIError(t, err, "ResourceAlreadyExistsException", 400)

	var batch []time.Time
	for i := range 20 {
		batch = append(batch, logsNow.Add(time.Duration(i-20)*time.Minute))
	}
	put, err := client.PutLogEvents(ctx, &cloudwatchlogs.PutLogEventsInput{LogGroupName: group, LogStreamName: stream, LogEvents: events(batch...), SequenceToken: aws.String("ignored")})
	if err != nil {
		t.Fatalf("PutLogEvents: %v", err)
	}
	if put.RejectedLogEventsInfo != nil {
		t.Errorf("RejectedLogEventsInfo = %+v", put.RejectedLogEventsInfo)
	}

	streams, err := client.DescribeLogStreams(ctx, &cloudwatchlogs.DescribeLogStreamsInput{LogGroupName: group})
	if err != nil || len(streams.LogStreams) != 1 || aws.ToString(streams.LogStreams[0].LogStreamName) != "sub_1" {
		t.Fatalf("DescribeLogStreams = %+v, %v", streams, err)
	}
	if got := aws.ToInt64(streams.LogStreams[0].LastEventTimestamp); got != batch[19].UnixMilli() {
		t.Errorf("LastEventTimestamp = %d, want %d", got, batch[19].UnixMilli())
	}

	t.Run("GetLogEvents pages forward from the head", func(t *testing.T) {
		var got []string
		token := (*string)(nil)
		for range 10 {
			page, err := client.GetLogEvents(ctx, &cloudwatchlogs.GetLogEventsInput{LogGroupName: group, LogStreamName: stream, StartFromHead: aws.Bool(true), Limit: aws.Int32(7), NextToken: token})
			if err != nil {
				t.Fatalf("GetLogEvents: %v", err)
			}
			for _, e := range page.Events {
				got = append(got, aws.ToString(e.Message))
			}
			if aws.ToString(page.NextForwardToken) == aws.ToString(token) {
				break // the end: the same token comes back
			}
			token = page.NextForwardToken
		}
		if len(got) != 20 || got[0] != "event 0" || got[19] != "event 19" {
			t.Fatalf("read %d events: %v", len(got), got)
		}
	})
	t.Run("GetLogEvents reads the newest by default", func(t *testing.T) {
		page, err := client.GetLogEvents(ctx, &cloudwatchlogs.GetLogEventsInput{LogGroupName: group, LogStreamName: stream, Limit: aws.Int32(3)})
		if err != nil {
			t.Fatalf("GetLogEvents: %v", err)
		}
		if len(page.Events) != 3 || aws.ToString(page.Events[2].Message) != "event 19" {
			t.Fatalf("events %+v", page.Events)
		}
	})
	t.Run("FilterLogEvents", func(t *testing.T) {
		tests := []struct {
			pattern string
			want    int
		}{
			{"", 20},
			{"event", 20},
			{`"event 1"`, 11}, // event 1, event 10..19
			{"?1 ?2", 12},     // 1, 10..19, 2, 12 once
			{"event -1", 9},
		}
		for _, tt := range tests {
			t.Run(tt.pattern, func(t *testing.T) {
				var got int
				var token *string
				for {
					page, err := client.FilterLogEvents(ctx, &cloudwatchlogs.FilterLogEventsInput{LogGroupName: group, FilterPattern: aws.String(tt.pattern), Limit: aws.Int32(4), NextToken: token})
					if err != nil {
						t.Fatalf("FilterLogEvents: %v", err)
					}
					got += len(page.Events)
					if page.NextToken == nil {
						break
					}
					token = page.NextToken
				}
				if got != tt.want {
					t.Errorf("%d events match %q, want %d", got, tt.pattern, tt.want)
				}
			})
		}
		_, err := client.FilterLogEvents(ctx, &cloudwatchlogs.FilterLogEventsInput{LogGroupName: group, FilterPattern: aws.String("[ip, user]")})
		wantAPIError(t, err, "InvalidParameterException", 400)
	})

	if _, err := client.DeleteLogStream(ctx, &cloudwatchlogs.DeleteLogStreamInput{LogGroupName: group, LogStreamName: stream}); err != nil {
		t.Fatalf("DeleteLogStream: %v", err)
	}
	_, err = client.PutLogEvents(ctx, &cloudwatchlogs.PutLogEventsInput{LogGroupName: group, LogStreamName: stream, LogEvents: events(logsNow)})
	wantAPIError(t, err, "ResourceNotFoundException", 400)
	if _, err := emu.LogEvents("/sluice/audit", "sub_1"); err == nil {
		t.Error("LogEvents of a deleted stream: no error")
	}
}

func TestPutLogEventsChecks(t *testing.T) {
	emu, client := startLogs(t, emulator.Config{})
	if err := emu.CreateLogGroup("g", 0); err != nil {
		t.Fatal(err)
	}
	if err := emu.CreateLogGroup("retained", 7); err != nil {
		t.Fatal(err)
	}
	day := 24 * time.Hour
	big := func(n, size int) []types.InputLogEvent {
		out := make([]types.InputLogEvent, n)
		for i := range out {
			out[i] = types.InputLogEvent{Timestamp: aws.Int64(logsNow.UnixMilli()), Message: aws.String(strings.Repeat("x", size))}
		}
		return out
	}
	intp := func(i int32) *int32 { return &i }
	tests := []struct {
		name     string
		group    string
		events   []types.InputLogEvent
		wantCode string
		want     *types.RejectedLogEventsInfo
		stored   int
	}{
		{name: "10,000 events", group: "g", events: big(10_000, 1), stored: 10_000},
		{name: "10,001 events", group: "g", events: big(10_001, 1), wantCode: "InvalidParameterException"},
		{name: "1,048,576 bytes with 26 per event", group: "g", events: big(2, 1_048_576/2-26), stored: 2},
		{name: "1,048,577 bytes", group: "g", events: big(2, 1_048_576/2-25), wantCode: "InvalidParameterException"},
		{name: "out of order", group: "g", events: events(logsNow, logsNow.Add(-time.Second)), wantCode: "InvalidParameterException"},
		{name: "spanning over 24 h", group: "g", events: events(logsNow.Add(-25*time.Hour), logsNow), wantCode: "InvalidParameterException"},
		{name: "an empty batch", group: "g", events: []types.InputLogEvent{}, wantCode: "InvalidParameterException"},
		{
			name: "too old, and too new", group: "g",
			events: events(logsNow.Add(-15*day), logsNow.Add(-15*day), logsNow.Add(-time.Hour), logsNow, logsNow.Add(3*time.Hour)),
			want:   &types.RejectedLogEventsInfo{TooOldLogEventEndIndex: intp(2), TooNewLogEventStartIndex: intp(4)}, stored: 2,
		},
		{
			name: "older than the group's retention", group: "retained",
			events: events(logsNow.Add(-8*day), logsNow.Add(-time.Hour)),
			want:   &types.RejectedLogEventsInfo{ExpiredLogEventEndIndex: intp(1)}, stored: 1,
		},
		{
			name: "a batch spanning 24 h once the rejected are out", group: "g",
			events: events(logsNow.Add(-20*day), logsNow.Add(-23*time.Hour), logsNow),
			want:   &types.RejectedLogEventsInfo{TooOldLogEventEndIndex: intp(1)}, stored: 2,
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stream := fmt.Sprintf("s%d", i)
			if err := emu.CreateLogStream(tt.group, stream); err != nil {
				t.Fatal(err)
			}
			out, err := client.PutLogEvents(t.Context(), &cloudwatchlogs.PutLogEventsInput{LogGroupName: aws.String(tt.group), LogStreamName: aws.String(stream), LogEvents: tt.events})
			if tt.wantCode != "" {
				wantAPIError(t, err, tt.wantCode, 400)
				return
			}
			if err != nil {
				t.Fatalf("PutLogEvents: %v", err)
			}
			if got := out.RejectedLogEventsInfo; fmt.Sprint(deref(got)) != fmt.Sprint(deref(tt.want)) {
				t.Errorf("RejectedLogEventsInfo = %v, want %v", deref(got), deref(tt.want))
			}
			stored, err := emu.LogEvents(tt.group, stream)
			if err != nil || len(stored) != tt.stored {
				t.Errorf("stored %d events, want %d (%v)", len(stored), tt.stored, err)
			}
		})
	}
}

// deref shows a RejectedLogEventsInfo's indexes.
func deref(info *types.RejectedLogEventsInfo) [3]int32 {
	out := [3]int32{-1, -1, -1}
	if info == nil {
		return out
	}
	for i, p := range []*int32{info.TooNewLogEventStartIndex, info.TooOldLogEventEndIndex, info.ExpiredLogEventEndIndex} {
		if p != nil {
			out[i] = *p
		}
	}
	return out
}

func TestLogsAutoCreate(t *testing.T) {
	emu, client := startLogs(t, emulator.Config{AutoCreate: true})
	_, err := client.PutLogEvents(t.Context(), &cloudwatchlogs.PutLogEventsInput{LogGroupName: aws.String("new/group"), LogStreamName: aws.String("s"), LogEvents: events(logsNow)})
	if err != nil {
		t.Fatalf("PutLogEvents to a new group: %v", err)
	}
	if stored, err := emu.LogEvents("new/group", "s"); err != nil || len(stored) != 1 {
		t.Fatalf("LogEvents = %d, %v", len(stored), err)
	}
}

// TestDescribeLogStreamsOrder pins the answers of DescribeLogStreams, by
// name or by last event time, ascending or descending, with a prefix, and
// of DeleteLogStream and the Go API's LogStreams on the same streams.
func TestDescribeLogStreamsOrder(t *testing.T) {
	emu, client := startLogs(t, emulator.Config{})
	ctx := t.Context()
	group := aws.String("g")
	if err := emu.CreateLogGroup("g", 0); err != nil {
		t.Fatal(err)
	}
	// Minutes before now of each stream's last event; c has none, a and
	// d tie.
	for _, s := range []struct {
		name string
		ago  time.Duration
	}{{"d", time.Minute}, {"c", 0}, {"x1", 2 * time.Minute}, {"a", time.Minute}, {"b", 3 * time.Minute}} {
		if err := emu.CreateLogStream("g", s.name); err != nil {
			t.Fatal(err)
		}
		if s.ago == 0 {
			continue
		}
		if _, err := client.PutLogEvents(ctx, &cloudwatchlogs.PutLogEventsInput{LogGroupName: group, LogStreamName: aws.String(s.name), LogEvents: events(logsNow.Add(-s.ago))}); err != nil {
			t.Fatalf("PutLogEvents: %v", err)
		}
	}
	describe := func(in *cloudwatchlogs.DescribeLogStreamsInput) string {
		t.Helper()
		in.LogGroupName = group
		out, err := client.DescribeLogStreams(ctx, in)
		if err != nil {
			t.Fatalf("DescribeLogStreams(%+v): %v", in, err)
		}
		var names []string
		for _, ls := range out.LogStreams {
			names = append(names, aws.ToString(ls.LogStreamName))
		}
		return fmt.Sprint(names)
	}
	for _, tt := range []struct {
		in   cloudwatchlogs.DescribeLogStreamsInput
		want string
	}{
		{cloudwatchlogs.DescribeLogStreamsInput{}, "[a b c d x1]"},
		{cloudwatchlogs.DescribeLogStreamsInput{Descending: aws.Bool(true)}, "[x1 d c b a]"},
		{cloudwatchlogs.DescribeLogStreamsInput{OrderBy: types.OrderByLastEventTime}, "[c b x1 a d]"},
		{cloudwatchlogs.DescribeLogStreamsInput{OrderBy: types.OrderByLastEventTime, Descending: aws.Bool(true)}, "[d a x1 b c]"},
		{cloudwatchlogs.DescribeLogStreamsInput{LogStreamNamePrefix: aws.String("x")}, "[x1]"},
		{cloudwatchlogs.DescribeLogStreamsInput{LogStreamNamePrefix: aws.String("y")}, "[]"},
	} {
		if got := describe(&tt.in); got != tt.want {
			t.Errorf("DescribeLogStreams(order %q, descending %v, prefix %q) = %s, want %s", tt.in.OrderBy, aws.ToBool(tt.in.Descending), aws.ToString(tt.in.LogStreamNamePrefix), got, tt.want)
		}
	}

	if _, err := client.DeleteLogStream(ctx, &cloudwatchlogs.DeleteLogStreamInput{LogGroupName: group, LogStreamName: aws.String("b")}); err != nil {
		t.Fatalf("DeleteLogStream: %v", err)
	}
	_, err := client.DeleteLogStream(ctx, &cloudwatchlogs.DeleteLogStreamInput{LogGroupName: group, LogStreamName: aws.String("b")})
	wantAPIError(t, err, "ResourceNotFoundException", 400)
	_, err = client.DeleteLogStream(ctx, &cloudwatchlogs.DeleteLogStreamInput{LogGroupName: aws.String("nope"), LogStreamName: aws.String("b")})
	wantAPIError(t, err, "ResourceNotFoundException", 400)
	_, err = client.DescribeLogStreams(ctx, &cloudwatchlogs.DescribeLogStreamsInput{LogGroupName: aws.String("nope")})
	wantAPIError(t, err, "ResourceNotFoundException", 400)
	if err := emu.DeleteLogStream("g", "a"); err != nil {
		t.Fatalf("DeleteLogStream: %v", err)
	}
	if err := emu.DeleteLogStream("g", "a"); !errors.Is(err, emulator.ErrNotFound) {
		t.Errorf("DeleteLogStream of a deleted stream = %v, want ErrNotFound", err)
	}
	if err := emu.DeleteLogStream("nope", "a"); !errors.Is(err, emulator.ErrNotFound) {
		t.Errorf("DeleteLogStream in a missing group = %v, want ErrNotFound", err)
	}
	if got, err := emu.LogStreams("g"); err != nil || fmt.Sprint(got) != "[c d x1]" {
		t.Errorf("LogStreams = %v, %v; want [c d x1]", got, err)
	}
	if _, err := emu.LogStreams("nope"); !errors.Is(err, emulator.ErrNotFound) {
		t.Errorf("LogStreams of a missing group = %v, want ErrNotFound", err)
	}
	if got := describe(&cloudwatchlogs.DescribeLogStreamsInput{}); got != "[c d x1]" {
		t.Errorf("DescribeLogStreams after the deletes = %s, want [c d x1]", got)
	}
}
