package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/firehose"
	firehosetypes "github.com/aws/aws-sdk-go-v2/service/firehose/types"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	kinesistypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
)

// TestServeDevKeepsEmulatorState restarts sluice serve --dev on its data
// dir and finds in its emulator what was there before: an event sluice
// delivered (read back with sluice tail), and a stream, delivery stream
// and log group made and written directly through the SDK, which no
// redelivery could make again.
func TestServeDevKeepsEmulatorState(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs sluice serve --dev twice")
	}
	clearSluiceEnv(t)
	bin := buildSluice(t)
	dataDir := t.TempDir()
	const token = "sk_serve_dev_state_test_0123456789"
	env := []string{"SLUICE_BOOTSTRAP_API_KEY=" + token, "SLUICE_DEV=true", "SLUICE_DEV_AWS_LISTEN=127.0.0.1:0"}
	ctx := context.Background()

	p := startServe(t, bin, dataDir, env...)
	endpoint := p.logAttr(t, "dev mode: every destination delivers to the AWS emulator", "aws_endpoint")
	emu := &emulatortest.Emulator{Endpoint: endpoint, Region: emulator.DefaultRegion}

	kc, fc, lc := emu.KinesisClient(), emu.FirehoseClient(), emu.LogsClient()
	if _, err := kc.CreateStream(ctx, &kinesis.CreateStreamInput{StreamName: aws.String("kept"), ShardCount: aws.Int32(1)}); err != nil {
		t.Fatalf("CreateStream: %v", err)
	}
	if _, err := kc.PutRecord(ctx, &kinesis.PutRecordInput{StreamName: aws.String("kept"), PartitionKey: aws.String("k"), Data: []byte("kinesis record")}); err != nil {
		t.Fatalf("PutRecord: %v", err)
	}
	if _, err := fc.PutRecord(ctx, &firehose.PutRecordInput{DeliveryStreamName: aws.String("kept"), Record: &firehosetypes.Record{Data: []byte("firehose record")}}); err != nil {
		t.Fatalf("Firehose PutRecord: %v", err)
	}
	if _, err := lc.CreateLogGroup(ctx, &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String("/kept")}); err != nil {
		t.Fatalf("CreateLogGroup: %v", err)
	}

	// An event delivered through sluice to a Kinesis destination.
	arn := "arn:aws:kinesis:us-east-1:123456789012:stream/edge"
	status, body := request(t, http.MethodPost, p.url+"/event_destinations", token, `{"target": {"kinesis": {"stream_arn": "`+arn+`", "auth": {"role": {"role_arn": "arn:aws:iam::123456789012:role/sluice"}}}}}`)
	if status != http.StatusCreated {
		t.Fatalf("creating a destination: %d %s", status, body)
	}
	var d struct{ ID string }
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	status, body = request(t, http.MethodPost, p.url+"/event_subscriptions", token, `{"sources": [{"type": "http_request_complete.v0"}], "destination_ids": ["`+d.ID+`"]}`)
	if status != http.StatusCreated {
		t.Fatalf("creating the subscription: %d %s", status, body)
	}
	delivered := ""
	for deadline := time.Now().Add(30 * time.Second); delivered == ""; {
		status, body := request(t, http.MethodPost, p.url+"/events", token, `[{"event_type": "http_request_complete.v0", "object": {}}]`)
		if status != http.StatusAccepted {
			t.Fatalf("publishing: %d %s", status, body)
		}
		out, _, err := runSluice(t, "", "tail", "--json", "--emulator", endpoint, arn, "--since", "1h", "--follow=false")
		if err == nil && strings.Contains(out, `"event_id":"ev_`) {
			delivered = out
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s, no event reached the destination (last tail: %v):\n%s", err, p.tail())
		}
		time.Sleep(time.Second) // publishing the next event, one a second
	}
	_, firstID, _ := strings.Cut(delivered, `"event_id":"`)
	firstID, _, _ = strings.Cut(firstID, `"`)

	p.stop(t)
	p = startServe(t, bin, dataDir, env...)
	endpoint = p.logAttr(t, "dev mode: every destination delivers to the AWS emulator", "aws_endpoint")
	emu = &emulatortest.Emulator{Endpoint: endpoint, Region: emulator.DefaultRegion}
	kc, fc, lc = emu.KinesisClient(), emu.FirehoseClient(), emu.LogsClient()

	out, _, err := runSluice(t, "", "tail", "--json", "--emulator", endpoint, arn, "--since", "1h", "--follow=false")
	if err != nil || !strings.Contains(out, firstID) {
		t.Errorf("after the restart, sluice tail of %s: %v, does not show %s:\n%s", arn, err, firstID, out)
	}
	iterator, err := kc.GetShardIterator(ctx, &kinesis.GetShardIteratorInput{StreamName: aws.String("kept"), ShardId: aws.String("shardId-000000000000"), ShardIteratorType: kinesistypes.ShardIteratorTypeTrimHorizon})
	if err != nil {
		t.Fatalf("after the restart, GetShardIterator of stream kept: %v", err)
	}
	records, err := kc.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: iterator.ShardIterator})
	if err != nil || len(records.Records) != 1 || string(records.Records[0].Data) != "kinesis record" {
		t.Errorf("after the restart, GetRecords of stream kept: %v, %+v", err, records)
	}
	if _, err := fc.DescribeDeliveryStream(ctx, &firehose.DescribeDeliveryStreamInput{DeliveryStreamName: aws.String("kept")}); err != nil {
		t.Errorf("after the restart, DescribeDeliveryStream kept: %v", err)
	}
	status, body = request(t, http.MethodGet, endpoint+"/_emulator/firehose/kept/records?format=raw", "", "")
	if status != http.StatusOK || body != "firehose record" {
		t.Errorf("after the restart, the records of delivery stream kept: %d %q", status, body)
	}
	groups, err := lc.DescribeLogGroups(ctx, &cloudwatchlogs.DescribeLogGroupsInput{LogGroupNamePrefix: aws.String("/kept")})
	if err != nil || len(groups.LogGroups) != 1 {
		t.Errorf("after the restart, DescribeLogGroups /kept: %v, %+v", err, groups)
	}
}

// TestServeDevBoundsEmulator checks --dev-aws-max-stored-bytes (here
// from its environment variable) bounds what the emulator of serve --dev
// keeps: past it, the oldest records go.
func TestServeDevBoundsEmulator(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs sluice serve --dev")
	}
	clearSluiceEnv(t)
	bin := buildSluice(t)
	p := startServe(t, bin, t.TempDir(), "SLUICE_BOOTSTRAP_API_KEY=sk_serve_dev_bound_test_0123456789", "SLUICE_DEV=true",
		"SLUICE_DEV_AWS_LISTEN=127.0.0.1:0", "SLUICE_DEV_AWS_MAX_STORED_BYTES=1KiB")
	endpoint := p.logAttr(t, "dev mode: every destination delivers to the AWS emulator", "aws_endpoint")
	fc := (&emulatortest.Emulator{Endpoint: endpoint, Region: emulator.DefaultRegion}).FirehoseClient()
	for _, data := range []string{"a", "b", "c"} {
		record := &firehosetypes.Record{Data: []byte(strings.Repeat(data, 400))}
		if _, err := fc.PutRecord(t.Context(), &firehose.PutRecordInput{DeliveryStreamName: aws.String("bounded"), Record: record}); err != nil {
			t.Fatalf("PutRecord: %v", err)
		}
	}
	status, body := request(t, http.MethodGet, endpoint+"/_emulator/firehose/bounded/records?format=raw", "", "")
	if want := strings.Repeat("b", 400) + strings.Repeat("c", 400); status != http.StatusOK || body != want {
		t.Errorf("with a bound of 1 KiB, the delivery stream keeps %d %q; want the newest 800 bytes", status, body)
	}
}

// TestEmulatorDataDir checks that sluice emulator keeps its state where
// serve --dev does with the same --data-dir, and in memory without one.
func TestEmulatorDataDir(t *testing.T) {
	cfg, err := emulatorFlags{dataDir: "/var/lib/sluice"}.emulatorConfig()
	if err != nil || cfg.DataDir != "/var/lib/sluice/emulator" {
		t.Errorf("--data-dir /var/lib/sluice: DataDir %q, %v; want /var/lib/sluice/emulator", cfg.DataDir, err)
	}
	if cfg, _ := (emulatorFlags{}).emulatorConfig(); cfg.DataDir != "" {
		t.Errorf("no --data-dir: DataDir %q, want none", cfg.DataDir)
	}
}
