package cloudwatchlogs

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/smithy-go"

	"github.com/sluicehq/sluice/internal/awstest"
	"github.com/sluicehq/sluice/sinks"
)

// testGroupARN is the log group of the unit tests, and testStream their
// log stream.
const (
	testGroupARN = "arn:aws:logs:eu-west-1:123456789012:log-group:/sluice/events:*"
	testStream   = "esb_2mE3subscription"
)

// fakeLogs is the CloudWatch Logs client of unit tests: putLogEvents and
// createLogStream answer each call; the calls are recorded.
type fakeLogs struct {
	//lint:ignore U1000 embedded as STYLE.md 3 says, so that the fake still compiles when the sink calls more of the client
	logsAPI
	putLogEvents    func(ctx context.Context, in *cloudwatchlogs.PutLogEventsInput) (*cloudwatchlogs.PutLogEventsOutput, error)
	createLogStream func(ctx context.Context, in *cloudwatchlogs.CreateLogStreamInput) error

	mu      sync.Mutex
	puts    []*cloudwatchlogs.PutLogEventsInput
	creates int
}

func (f *fakeLogs) PutLogEvents(ctx context.Context, _ *cloudwatchlogs.PutLogEventsInput, optFns ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.PutLogEventsOutput, error) {
	var o cloudwatchlogs.Options
	for _, fn := range optFns {
		fn(&o)
	}
	in := new(cloudwatchlogs.PutLogEventsInput)
	if err := awstest.SentInput(o.APIOptions, in); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.puts = append(f.puts, in)
	f.mu.Unlock()
	if f.putLogEvents == nil {
		return &cloudwatchlogs.PutLogEventsOutput{}, nil
	}
	return f.putLogEvents(ctx, in)
}

func (f *fakeLogs) CreateLogStream(ctx context.Context, in *cloudwatchlogs.CreateLogStreamInput, _ ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.CreateLogStreamOutput, error) {
	f.mu.Lock()
	f.creates++
	f.mu.Unlock()
	if f.createLogStream == nil {
		return &cloudwatchlogs.CreateLogStreamOutput{}, nil
	}
	return &cloudwatchlogs.CreateLogStreamOutput{}, f.createLogStream(ctx, in)
}

// counts returns the number of PutLogEvents and CreateLogStream calls.
func (f *fakeLogs) counts() (puts, creates int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.puts), f.creates
}

// newFakeSink returns a sink of testGroupARN and testStream writing
// through fake.
func newFakeSink(t *testing.T, fake *fakeLogs) *Sink {
	t.Helper()
	group, err := parseLogGroupARN(testGroupARN)
	if err != nil {
		t.Fatal(err)
	}
	return (&Sink{group: group, client: fake}).WithLogStream(testStream)
}

// apiError returns the SDK's error of a call answered with that status,
// code and message.
func apiError(status int, code, message string) error {
	return awstest.APIError("CloudWatch Logs", "PutLogEvents", status, &smithy.GenericAPIError{Code: code, Message: message})
}

// Errors CloudWatch Logs answers.
var (
	noStream      = apiError(400, "ResourceNotFoundException", "The specified log stream does not exist.")
	noGroup       = apiError(400, "ResourceNotFoundException", "The specified log group does not exist.")
	alreadyExists = apiError(400, "ResourceAlreadyExistsException", "The specified log stream already exists")
)

// base is the time of the unit tests' records.
var base = time.Date(2026, 11, 22, 10, 4, 5, 123_000_000, time.UTC)

// records returns n small records with IDs id-0, id-1, ..., a millisecond
// apart from base.
func records(n int) []sinks.Record {
	rs := make([]sinks.Record, n)
	for i := range rs {
		rs[i] = record(i, base.Add(time.Duration(i)*time.Millisecond))
	}
	return rs
}

// record returns record i, at t.
func record(i int, t time.Time) sinks.Record {
	return sinks.Record{ID: fmt.Sprintf("id-%d", i), Data: fmt.Appendf(nil, `{"n":%d}`, i), Timestamp: t}
}

// messages returns the messages of a call.
func messages(in *cloudwatchlogs.PutLogEventsInput) []string {
	var out []string
	for _, e := range in.LogEvents {
		out = append(out, aws.ToString(e.Message))
	}
	return out
}
