package emulator_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/firehose"
	"github.com/aws/aws-sdk-go-v2/service/firehose/types"

	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
)

func TestFirehoseRoundTrip(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{})
	client := emu.FirehoseClient()
	ctx := t.Context()
	created, err := client.CreateDeliveryStream(ctx, &firehose.CreateDeliveryStreamInput{DeliveryStreamName: aws.String("events")})
	if err != nil {
		t.Fatalf("CreateDeliveryStream: %v", err)
	}
	if want := "arn:aws:firehose:us-east-1:123456789012:deliverystream/events"; aws.ToString(created.DeliveryStreamARN) != want {
		t.Errorf("DeliveryStreamARN = %s, want %s", aws.ToString(created.DeliveryStreamARN), want)
	}
	_, err = client.CreateDeliveryStream(ctx, &firehose.CreateDeliveryStreamInput{DeliveryStreamName: aws.String("events")})
	wantAPIError(t, err, "ResourceInUseException", 400)
	described, err := client.DescribeDeliveryStream(ctx, &firehose.DescribeDeliveryStreamInput{DeliveryStreamName: aws.String("events")})
	if err != nil {
		t.Fatalf("DescribeDeliveryStream: %v", err)
	}
	if d := described.DeliveryStreamDescription; d.DeliveryStreamStatus != types.DeliveryStreamStatusActive || d.DeliveryStreamType != types.DeliveryStreamTypeDirectPut {
		t.Errorf("description = %+v", d)
	}
	_, err = client.DescribeDeliveryStream(ctx, &firehose.DescribeDeliveryStreamInput{DeliveryStreamName: aws.String("nope")})
	wantAPIError(t, err, "ResourceNotFoundException", 400)

	if _, err := client.PutRecord(ctx, &firehose.PutRecordInput{DeliveryStreamName: aws.String("events"), Record: &types.Record{Data: []byte("first\n")}}); err != nil {
		t.Fatalf("PutRecord: %v", err)
	}
	var batch []types.Record
	for i := range 500 {
		batch = append(batch, types.Record{Data: []byte(fmt.Sprintf("record %d\n", i))})
	}
	out, err := client.PutRecordBatch(ctx, &firehose.PutRecordBatchInput{DeliveryStreamName: aws.String("events"), Records: batch})
	if err != nil {
		t.Fatalf("PutRecordBatch: %v", err)
	}
	if aws.ToInt32(out.FailedPutCount) != 0 || len(out.RequestResponses) != 500 || aws.ToString(out.RequestResponses[0].RecordId) == "" {
		t.Fatalf("PutRecordBatch = %d failed, %d responses", aws.ToInt32(out.FailedPutCount), len(out.RequestResponses))
	}

	records, dropped, err := emu.FirehoseRecords("events")
	if err != nil || dropped != 0 || len(records) != 501 {
		t.Fatalf("FirehoseRecords = %d records, %d dropped, %v", len(records), dropped, err)
	}
	if string(records[0].Data) != "first\n" || string(records[500].Data) != "record 499\n" {
		t.Errorf("records %q ... %q", records[0].Data, records[500].Data)
	}

	t.Run("admin endpoint", func(t *testing.T) {
		resp, err := http.Get(emu.Endpoint + "/_emulator/firehose/events/records?format=raw")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if lines := bytes.Count(raw, []byte("\n")); resp.StatusCode != 200 || lines != 501 {
			t.Fatalf("raw records: status %d, %d lines", resp.StatusCode, lines)
		}
		resp, err = http.Get(emu.Endpoint + "/_emulator/firehose/events/records")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body struct {
			Records []emulator.FirehoseRecord `json:"records"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || len(body.Records) != 501 || string(body.Records[1].Data) != "record 0\n" {
			t.Fatalf("JSON records: %d, %v", len(body.Records), err)
		}
	})
}

func TestFirehoseLimits(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{})
	client := emu.FirehoseClient()
	if err := emu.CreateDeliveryStream("events"); err != nil {
		t.Fatal(err)
	}
	records := func(n, size int) []types.Record {
		out := make([]types.Record, n)
		for i := range out {
			out[i] = types.Record{Data: bytes.Repeat([]byte("x"), size)}
		}
		return out
	}
	tests := []struct {
		name     string
		stream   string
		records  []types.Record
		wantCode string
	}{
		{"500 records", "events", records(500, 10), ""},
		{"501 records", "events", records(501, 10), "ValidationException"},
		{"a record of 1,000 KiB", "events", records(1, 1000<<10), ""},
		{"a record over 1,000 KiB", "events", records(1, 1000<<10+1), "ValidationException"},
		{"4 MiB", "events", append(records(4, 1000<<10), records(1, 4<<20-4*1000<<10)...), ""},
		{"over 4 MiB", "events", append(records(4, 1000<<10), records(1, 4<<20-4*1000<<10+1)...), "InvalidArgumentException"},
		{"a missing delivery stream", "nope", records(1, 10), "ResourceNotFoundException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := client.PutRecordBatch(t.Context(), &firehose.PutRecordBatchInput{DeliveryStreamName: aws.String(tt.stream), Records: tt.records})
			if tt.wantCode != "" {
				wantAPIError(t, err, tt.wantCode, 400)
				return
			}
			if err != nil {
				t.Fatalf("PutRecordBatch: %v", err)
			}
			if aws.ToInt32(out.FailedPutCount) != 0 {
				t.Fatalf("FailedPutCount = %d", aws.ToInt32(out.FailedPutCount))
			}
		})
	}
}

func TestFirehoseAutoCreate(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{AutoCreate: true})
	_, err := emu.FirehoseClient().PutRecordBatch(t.Context(), &firehose.PutRecordBatchInput{DeliveryStreamName: aws.String("new"), Records: []types.Record{{Data: []byte("x")}}})
	if err != nil {
		t.Fatalf("PutRecordBatch to a new delivery stream: %v", err)
	}
	if records, _, err := emu.FirehoseRecords("new"); err != nil || len(records) != 1 {
		t.Fatalf("FirehoseRecords = %d, %v", len(records), err)
	}
}
