package cloudwatchlogs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"

	"github.com/sluicehq/sluice/sinks"
)

// TestWriteCreatesLogStream checks that a missing log stream is created and
// the events put again; that a stream another writer created meanwhile is
// fine; and that a missing group is a not_found destination error.
func TestWriteCreatesLogStream(t *testing.T) {
	tests := []struct {
		name      string
		create    error
		secondPut error
		wantPuts  int
		wantClass sinks.Class // of a DestinationError; "" for accepted
	}{
		{"created", nil, nil, 2, ""},
		{"created by another writer", alreadyExists, nil, 2, ""},
		{"no group", noGroup, nil, 1, sinks.ClassNotFound},
		{"may not create", apiError(400, "AccessDeniedException", "not authorized to perform: logs:CreateLogStream"), nil, 1, sinks.ClassAccessDenied},
		{"create throttled", apiError(400, "ThrottlingException", "Rate exceeded"), nil, 1, sinks.ClassThrottled},
		{"deleted again at once", nil, noStream, 2, sinks.ClassNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeLogs{}
			fake.putLogEvents = func(ctx context.Context, in *cloudwatchlogs.PutLogEventsInput) (*cloudwatchlogs.PutLogEventsOutput, error) {
				if puts, _ := fake.counts(); puts == 1 {
					return nil, noStream
				}
				if tt.secondPut != nil {
					return nil, tt.secondPut
				}
				return &cloudwatchlogs.PutLogEventsOutput{}, nil
			}
			fake.createLogStream = func(ctx context.Context, in *cloudwatchlogs.CreateLogStreamInput) error {
				if aws.ToString(in.LogGroupName) != "/sluice/events" || aws.ToString(in.LogStreamName) != testStream {
					t.Errorf("created %s in %s", aws.ToString(in.LogStreamName), aws.ToString(in.LogGroupName))
				}
				return tt.create
			}
			results, err := newFakeSink(t, fake).Write(context.Background(), records(2))
			puts, creates := fake.counts()
			if puts != tt.wantPuts || creates != 1 {
				t.Errorf("%d puts, %d creates; want %d and 1", puts, creates, tt.wantPuts)
			}
			if tt.wantClass == "" {
				if err != nil || results[0].Status != sinks.Accepted || results[1].Status != sinks.Accepted {
					t.Fatalf("Write = %v, %v; want both accepted", results, err)
				}
				return
			}
			var de *sinks.DestinationError
			if !errors.As(err, &de) || de.Class != tt.wantClass || results != nil {
				t.Fatalf("Write = %v, %v; want a DestinationError of class %s", results, err, tt.wantClass)
			}
		})
	}
}

// TestWriteConcurrentCreation checks writers racing to create one stream:
// each creates it or finds it created, and every record is accepted.
func TestWriteConcurrentCreation(t *testing.T) {
	var created bool
	fake := &fakeLogs{}
	fake.putLogEvents = func(ctx context.Context, in *cloudwatchlogs.PutLogEventsInput) (*cloudwatchlogs.PutLogEventsOutput, error) {
		fake.mu.Lock()
		defer fake.mu.Unlock()
		if !created {
			return nil, noStream
		}
		return &cloudwatchlogs.PutLogEventsOutput{}, nil
	}
	fake.createLogStream = func(ctx context.Context, in *cloudwatchlogs.CreateLogStreamInput) error {
		fake.mu.Lock()
		defer fake.mu.Unlock()
		if created {
			return alreadyExists
		}
		created = true
		return nil
	}
	sink := newFakeSink(t, fake)
	start := make(chan struct{})
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			<-start
			results, err := sink.Write(context.Background(), records(3))
			if err == nil && slices.ContainsFunc(results, func(r sinks.Result) bool { return r.Status != sinks.Accepted }) {
				err = fmt.Errorf("results %v", results)
			}
			errs <- err
		}()
	}
	close(start)
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestLogStreams checks the sinks of WithLogStream and ForSubscription: a
// sink with no valid stream fails whole, unsent, with ClassInvalid.
func TestLogStreams(t *testing.T) {
	fake := &fakeLogs{}
	sink := newFakeSink(t, fake)
	for _, name := range []string{"", "a:b", "a*", string(bytes.Repeat([]byte("s"), 513))} {
		_, err := sink.WithLogStream(name).Write(context.Background(), records(1))
		if sinks.ClassOf(err) != sinks.ClassInvalid {
			t.Errorf("stream %.20q: Write = %v, want class invalid", name, err)
		}
	}
	if puts, _ := fake.counts(); puts != 0 {
		t.Errorf("%d calls to streams that cannot be", puts)
	}
	var sub sinks.Sink = sink
	routed, ok := sub.(sinks.SubscriptionSink)
	if !ok {
		t.Fatal("*Sink is no sinks.SubscriptionSink")
	}
	if _, err := routed.ForSubscription("esb_other").Write(context.Background(), records(1)); err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(fake.puts[0].LogStreamName); got != "esb_other" {
		t.Errorf("wrote to stream %q, want esb_other", got)
	}
}
