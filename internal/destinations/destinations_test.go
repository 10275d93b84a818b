package destinations_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/awstest"
	"github.com/sluicehq/sluice/internal/destinations"
	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/firehose"
	"github.com/sluicehq/sluice/sinks/kinesis"
)

var (
	creds = store.AWSAuth{Creds: &store.AWSCreds{AccessKeyID: emulatortest.AccessKeyID, SecretAccessKey: emulatortest.SecretAccessKey}}
	role  = store.AWSAuth{Role: &store.AWSRole{RoleARN: "arn:aws:iam::123456789012:role/sluice-delivery"}}
)

func destination(target store.Target) store.Destination {
	return store.Destination{ID: "ed_test", AccountID: "ac_test", Target: target}
}

// TestNew checks the sink built for each target.
func TestNew(t *testing.T) {
	awstest.Isolate(t)
	tests := []struct {
		name   string
		target store.Target
		check  func(sinks.Sink) bool
	}{
		{"kinesis", store.Target{Kinesis: &store.KinesisTarget{Auth: creds, StreamARN: "arn:aws:kinesis:eu-west-1:123456789012:stream/events"}},
			func(s sinks.Sink) bool { _, ok := s.(*kinesis.Sink); return ok }},
		{"firehose", store.Target{Firehose: &store.FirehoseTarget{Auth: role, DeliveryStreamARN: "arn:aws:firehose:eu-west-1:123456789012:deliverystream/events"}},
			func(s sinks.Sink) bool { _, ok := s.(*firehose.Sink); return ok }},
		{"cloudwatch logs", store.Target{CloudWatchLogs: &store.CloudWatchLogsTarget{Auth: role, LogGroupARN: "arn:aws:logs:eu-west-1:123456789012:log-group:/sluice/events:*"}},
			func(s sinks.Sink) bool { _, ok := s.(sinks.SubscriptionSink); return ok }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink, err := destinations.New(context.Background(), destination(tt.target))
			if err != nil || !tt.check(sink) {
				t.Fatalf("New = %T, %v", sink, err)
			}
		})
	}
}

// TestNewRefuses checks the destinations no sink is built for.
func TestNewRefuses(t *testing.T) {
	awstest.Isolate(t)
	ctx := context.Background()
	if _, err := destinations.New(ctx, destination(store.Target{})); !errors.Is(err, destinations.ErrUnsupported) {
		t.Errorf("no target: %v, want ErrUnsupported", err)
	}
	bad := destination(store.Target{Firehose: &store.FirehoseTarget{Auth: creds, DeliveryStreamARN: "arn:aws:kinesis:eu-west-1:123456789012:stream/events"}})
	if _, err := destinations.New(ctx, bad); !errors.Is(err, firehose.ErrConfig) {
		t.Errorf("a Kinesis ARN as Firehose target: %v, want firehose.ErrConfig", err)
	}
	cwl := destination(store.Target{CloudWatchLogs: &store.CloudWatchLogsTarget{Auth: creds, LogGroupARN: "arn:aws:logs:eu-west-1:123456789012:log-group:/sluice/events"}})
	group, err := destinations.New(ctx, cwl)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := group.(sinks.SubscriptionSink).ForSubscription("esb:bad").Write(ctx, []sinks.Record{{ID: "ev_1", Data: []byte("{}"), Timestamp: time.Now()}}); sinks.ClassOf(err) != sinks.ClassInvalid {
		t.Errorf("a subscription id that names no log stream: %v, want class invalid", err)
	}
}

// TestWriteThroughEmulator builds Firehose and CloudWatch Logs sinks from
// destinations, with the emulator found through AWS_ENDPOINT_URL as sluice
// serve would, and writes one event through each.
func TestWriteThroughEmulator(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{})
	awstest.Isolate(t)
	t.Setenv("AWS_ENDPOINT_URL", emu.Endpoint)
	if err := emu.CreateDeliveryStream("events"); err != nil {
		t.Fatal(err)
	}
	if err := emu.CreateLogGroup("/sluice/events", 0); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	record := sinks.Record{ID: "ev_1", Data: []byte(`{"event_id":"ev_1"}`), Timestamp: time.Now()}

	fh, err := destinations.New(ctx, destination(store.Target{Firehose: &store.FirehoseTarget{Auth: creds, DeliveryStreamARN: "arn:aws:firehose:us-east-1:123456789012:deliverystream/events"}}))
	if err != nil {
		t.Fatal(err)
	}
	if results, err := fh.Write(ctx, []sinks.Record{record}); err != nil || results[0].Status != sinks.Accepted {
		t.Fatalf("Firehose: %v, %v", results, err)
	}
	if stored, _, _ := emu.FirehoseRecords("events"); len(stored) != 1 || string(stored[0].Data) != `{"event_id":"ev_1"}`+"\n" {
		t.Errorf("the delivery stream holds %v", stored)
	}

	cwl := destination(store.Target{CloudWatchLogs: &store.CloudWatchLogsTarget{Auth: creds, LogGroupARN: "arn:aws:logs:us-east-1:123456789012:log-group:/sluice/events:*"}})
	group, err := destinations.New(ctx, cwl)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := group.Write(ctx, []sinks.Record{record}); sinks.ClassOf(err) != sinks.ClassInvalid {
		t.Errorf("the group's sink wrote: %v, want class invalid", err)
	}
	for _, sink := range []sinks.Sink{group.(sinks.SubscriptionSink).ForSubscription("esb_first"), group.(sinks.SubscriptionSink).ForSubscription("esb_second")} {
		if results, err := sink.Write(ctx, []sinks.Record{record}); err != nil || results[0].Status != sinks.Accepted {
			t.Fatalf("CloudWatch Logs: %v, %v", results, err)
		}
	}
	for _, stream := range []string{"esb_first", "esb_second"} {
		if events, err := emu.LogEvents("/sluice/events", stream); err != nil || len(events) != 1 || events[0].Message != `{"event_id":"ev_1"}` {
			t.Errorf("log stream %s holds %v, %v", stream, events, err)
		}
	}
}

// TestFactoryOverrides sends every call to one endpoint, signed with the
// factory's keys, whatever the destination's credentials: a role, which
// the emulator could not assume, works, as with sluice serve --dev.
func TestFactoryOverrides(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{AutoCreate: true})
	awstest.Isolate(t)
	factory := destinations.Factory{Endpoint: emu.Endpoint, Auth: &sinks.AWSAuth{AccessKeyID: "dev", SecretAccessKey: "dev"}}
	ctx := context.Background()
	record := sinks.Record{ID: "ev_1", Data: []byte(`{"event_id":"ev_1"}`), Timestamp: time.Now()}
	for _, target := range []store.Target{
		{Kinesis: &store.KinesisTarget{Auth: role, StreamARN: "arn:aws:kinesis:eu-west-1:123456789012:stream/any"}},
		{Firehose: &store.FirehoseTarget{Auth: role, DeliveryStreamARN: "arn:aws:firehose:eu-west-1:123456789012:deliverystream/any"}},
		{CloudWatchLogs: &store.CloudWatchLogsTarget{Auth: role, LogGroupARN: "arn:aws:logs:eu-west-1:123456789012:log-group:any"}},
	} {
		sink, err := factory.New(ctx, destination(target))
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := sink.(sinks.SubscriptionSink); ok {
			sink = s.ForSubscription("esb_test")
		}
		if results, err := sink.Write(ctx, []sinks.Record{record}); err != nil || results[0].Status != sinks.Accepted {
			t.Fatalf("%T: %v, %v", sink, results, err)
		}
	}
	for _, want := range []struct {
		svc      emulator.Service
		resource string
	}{{emulator.ServiceKinesis, "any"}, {emulator.ServiceFirehose, "any"}, {emulator.ServiceLogs, "any"}} {
		if c := emu.Counters(want.svc, want.resource); c.Calls == 0 {
			t.Errorf("no call reached %s %s", want.svc, want.resource)
		}
	}
}
