package emulator_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/smithy-go"

	"github.com/sluicehq/sluice/internal/emulator"
)

// TestFilterLogEventsJSONPatterns filters events as sluice delivers them
// to CloudWatch Logs with the JSON patterns an analyst types, through the
// SDK's FilterLogEvents, two streams and pages of two.
func TestFilterLogEventsJSONPatterns(t *testing.T) {
	emu, client := startLogs(t, emulator.Config{})
	ctx := t.Context()
	group := "/sluice/edge"
	if err := emu.CreateLogGroup(group, 0); err != nil {
		t.Fatal(err)
	}
	streams := []struct {
		name     string
		first    int // minutes before now of the first event; the next ones 2 min apart
		messages []string
	}{
		{"sub_a", 10, []string{
			`{"event_id": "ev_1", "event_type": "http_request_complete.v0", "object": {"conn": {"server_port": 443}, "status": 200}}`,
			`{"event_id": "ev_2", "event_type": "http_request_complete.v0", "object": {"conn": {"server_port": 80}, "status": 503}}`,
			`plain text, not JSON`,
		}},
		{"sub_b", 9, []string{
			`{"event_id": "ev_3", "event_type": "dns_query.v0", "object": {"conn": {"server_port": 53}}}`,
			`{"event_id": "ev_4", "event_type": "http_request_complete.v0", "object": {"conn": {"server_port": 443}, "status": 404, "tls": true}}`,
		}},
	}
	for _, st := range streams {
		if err := emu.CreateLogStream(group, st.name); err != nil {
			t.Fatal(err)
		}
		var in []types.InputLogEvent
		for i, m := range st.messages {
			at := logsNow.Add(time.Duration(2*i-st.first) * time.Minute)
			in = append(in, types.InputLogEvent{Timestamp: aws.Int64(at.UnixMilli()), Message: aws.String(m)})
		}
		if _, err := client.PutLogEvents(ctx, &cloudwatchlogs.PutLogEventsInput{LogGroupName: aws.String(group), LogStreamName: aws.String(st.name), LogEvents: in}); err != nil {
			t.Fatalf("PutLogEvents: %v", err)
		}
	}
	tests := []struct {
		pattern string
		want    []string // event ids, by timestamp
	}{
		{`{ $.event_type = "http_request_complete.v0" }`, []string{"ev_1", "ev_2", "ev_4"}},
		{`{ $.object.conn.server_port = 443 }`, []string{"ev_1", "ev_4"}},
		{`{ $.object.conn.server_port != 443 }`, []string{"ev_3", "ev_2"}},
		{`{ $.object.status >= 400 && $.object.status < 500 }`, []string{"ev_4"}},
		{`{ $.event_type = "dns*" || $.object.status > 500 }`, []string{"ev_3", "ev_2"}},
		{`{ ($.object.conn.server_port = 443) && ($.object.tls NOT EXISTS) }`, []string{"ev_1"}},
		{`{ $.object.tls IS TRUE }`, []string{"ev_4"}},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			var got []string
			var token *string
			for {
				page, err := client.FilterLogEvents(ctx, &cloudwatchlogs.FilterLogEventsInput{LogGroupName: aws.String(group), FilterPattern: aws.String(tt.pattern), Limit: aws.Int32(2), NextToken: token})
				if err != nil {
					t.Fatalf("FilterLogEvents: %v", err)
				}
				for _, e := range page.Events {
					id, _, _ := strings.Cut(strings.TrimPrefix(aws.ToString(e.Message), `{"event_id": "`), `"`)
					got = append(got, id)
				}
				if page.NextToken == nil {
					break
				}
				token = page.NextToken
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("events %v, want %v", got, tt.want)
			}
		})
	}

	_, err := client.FilterLogEvents(ctx, &cloudwatchlogs.FilterLogEventsInput{LogGroupName: aws.String(group), FilterPattern: aws.String(`{ $.object.conn.server_port > "443" }`)})
	wantAPIError(t, err, "InvalidParameterException", 400)
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || !strings.Contains(apiErr.ErrorMessage(), `> compares numbers, and "443" is not a number`) {
		t.Errorf("message %q does not say what is wrong", apiErr.ErrorMessage())
	}
}
