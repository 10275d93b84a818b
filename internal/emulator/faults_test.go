package emulator_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	logstypes "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/aws-sdk-go-v2/service/firehose"
	firehosetypes "github.com/aws/aws-sdk-go-v2/service/firehose/types"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	kinesistypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
)

// kinesisBatch is n records of distinct partition keys.
func kinesisBatch(n int) []kinesistypes.PutRecordsRequestEntry {
	out := make([]kinesistypes.PutRecordsRequestEntry, n)
	for i := range out {
		out[i] = kinesistypes.PutRecordsRequestEntry{PartitionKey: aws.String(fmt.Sprint(i)), Data: []byte("x")}
	}
	return out
}

func firehoseBatch(n int) []firehosetypes.Record {
	out := make([]firehosetypes.Record, n)
	for i := range out {
		out[i] = firehosetypes.Record{Data: []byte("x\n")}
	}
	return out
}

func TestPerRecordFaults(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{Seed: 7})
	if err := emu.CreateStream("s", 4); err != nil {
		t.Fatal(err)
	}
	if err := emu.CreateDeliveryStream("d"); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()

	t.Run("kinesis", func(t *testing.T) {
		if err := emu.SetFault(emulator.Fault{Service: emulator.ServiceKinesis, Resource: "s", ThrottleRecords: 0.3}); err != nil {
			t.Fatal(err)
		}
		out, err := emu.KinesisClient().PutRecords(ctx, &kinesis.PutRecordsInput{StreamName: aws.String("s"), Records: kinesisBatch(500)})
		if err != nil {
			t.Fatalf("PutRecords: %v", err)
		}
		failed := int(aws.ToInt32(out.FailedRecordCount))
		if math.Abs(float64(failed)/500-0.3) > 0.08 {
			t.Errorf("%d of 500 records failed, want about 30%%", failed)
		}
		counted := 0
		for _, r := range out.Records {
			switch aws.ToString(r.ErrorCode) {
			case "":
				if r.SequenceNumber == nil || r.ShardId == nil {
					t.Fatalf("a stored record without SequenceNumber or ShardId: %+v", r)
				}
			case "ProvisionedThroughputExceededException":
				counted++
				if r.SequenceNumber != nil || aws.ToString(r.ErrorMessage) == "" {
					t.Fatalf("a failed record %+v", r)
				}
			default:
				t.Fatalf("ErrorCode %s", aws.ToString(r.ErrorCode))
			}
		}
		stored, _ := emu.KinesisRecords("s")
		if counted != failed || len(stored) != 500-failed {
			t.Errorf("%d records failed, FailedRecordCount %d, %d stored", counted, failed, len(stored))
		}
		c := emu.Counters(emulator.ServiceKinesis, "s")
		if c.RecordsAccepted != int64(500-failed) || c.RecordsFailed != int64(failed) {
			t.Errorf("counters %+v", c.OperationCounters)
		}
	})
	t.Run("firehose", func(t *testing.T) {
		if err := emu.SetFault(emulator.Fault{Service: emulator.ServiceFirehose, Resource: "d", ThrottleRecords: 0.2, FailRecords: 0.1}); err != nil {
			t.Fatal(err)
		}
		out, err := emu.FirehoseClient().PutRecordBatch(ctx, &firehose.PutRecordBatchInput{DeliveryStreamName: aws.String("d"), Records: firehoseBatch(500)})
		if err != nil {
			t.Fatalf("PutRecordBatch: %v", err)
		}
		codes := map[string]int{}
		for _, r := range out.RequestResponses {
			codes[aws.ToString(r.ErrorCode)]++
		}
		if codes["ServiceUnavailableException"] < 60 || codes["InternalFailure"] < 20 || codes[""]+int(aws.ToInt32(out.FailedPutCount)) != 500 {
			t.Errorf("codes %v, FailedPutCount %d", codes, aws.ToInt32(out.FailedPutCount))
		}
	})
}

func TestWholeCallFaults(t *testing.T) {
	tests := []struct {
		name       string
		fault      emulator.Fault
		wantCode   string
		wantStatus int
	}{
		{"kinesis access denied", emulator.Fault{Service: emulator.ServiceKinesis, Resource: "s", AccessDenied: true}, "AccessDeniedException", 400},
		{"kinesis not found", emulator.Fault{Service: emulator.ServiceKinesis, Resource: "s", NotFound: true}, "ResourceNotFoundException", 400},
		{"kinesis 5xx", emulator.Fault{Service: emulator.ServiceKinesis, Resource: "s", ServerErrors: 1}, "InternalFailure", 500},
		{"kinesis throttled", emulator.Fault{Service: emulator.ServiceKinesis, Resource: "s", ThrottleRequests: 1}, "ProvisionedThroughputExceededException", 400},
		{"kinesis, every stream", emulator.Fault{Service: emulator.ServiceKinesis, Resource: emulator.AnyResource, AccessDenied: true}, "AccessDeniedException", 400},
		{"firehose access denied", emulator.Fault{Service: emulator.ServiceFirehose, Resource: "d", AccessDenied: true}, "AccessDeniedException", 400},
		{"firehose 5xx", emulator.Fault{Service: emulator.ServiceFirehose, Resource: "d", ServerErrors: 1}, "InternalFailure", 500},
		{"firehose throttled", emulator.Fault{Service: emulator.ServiceFirehose, Resource: "d", ThrottleRequests: 1}, "ServiceUnavailableException", 503},
		{"logs not found", emulator.Fault{Service: emulator.ServiceLogs, Resource: "g", NotFound: true}, "ResourceNotFoundException", 400},
		{"logs 5xx", emulator.Fault{Service: emulator.ServiceLogs, Resource: "g", ServerErrors: 1}, "ServiceUnavailableException", 500},
		{"logs throttled", emulator.Fault{Service: emulator.ServiceLogs, Resource: "g", ThrottleRequests: 1}, "ThrottlingException", 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			emu := emulatortest.Start(t, emulator.Config{Faults: []emulator.Fault{tt.fault}})
			ctx := t.Context()
			if err := errors.Join(emu.CreateStream("s", 1), emu.CreateDeliveryStream("d"), emu.CreateLogGroup("g", 0), emu.CreateLogStream("g", "x")); err != nil {
				t.Fatal(err)
			}
			// put makes a call of the faulted service.
			put := func() (err error) {
				switch tt.fault.Service {
				case emulator.ServiceKinesis:
					_, err = emu.KinesisClient().PutRecords(ctx, &kinesis.PutRecordsInput{StreamName: aws.String("s"), Records: kinesisBatch(3)})
				case emulator.ServiceFirehose:
					_, err = emu.FirehoseClient().PutRecordBatch(ctx, &firehose.PutRecordBatchInput{DeliveryStreamName: aws.String("d"), Records: firehoseBatch(3)})
				case emulator.ServiceLogs:
					_, err = emu.LogsClient().PutLogEvents(ctx, &cloudwatchlogs.PutLogEventsInput{LogGroupName: aws.String("g"), LogStreamName: aws.String("x"),
						LogEvents: []logstypes.InputLogEvent{{Timestamp: aws.Int64(time.Now().UnixMilli()), Message: aws.String("m")}}})
				}
				return err
			}
			wantAPIError(t, put(), tt.wantCode, tt.wantStatus)
			c := emu.Counters(tt.fault.Service, map[emulator.Service]string{emulator.ServiceKinesis: "s", emulator.ServiceFirehose: "d", emulator.ServiceLogs: "g"}[tt.fault.Service])
			if c.Calls != 1 || c.Errors != 1 || c.RecordsAccepted != 0 {
				t.Errorf("counters %+v", c.OperationCounters)
			}

			// Cleared, the calls pass.
			emu.ClearFault(tt.fault.Service, tt.fault.Resource)
			if err := put(); err != nil {
				t.Fatalf("after ClearFault: %v", err)
			}
		})
	}
}

func TestFaultOperationsAndLatency(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{})
	if err := emu.CreateStream("s", 1); err != nil {
		t.Fatal(err)
	}
	client := emu.KinesisClient()
	ctx := t.Context()
	if err := emu.SetFault(emulator.Fault{Service: emulator.ServiceKinesis, Resource: "s", Operations: []string{"PutRecords"}, AccessDenied: true, Latency: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := client.PutRecords(ctx, &kinesis.PutRecordsInput{StreamName: aws.String("s"), Records: kinesisBatch(1)})
	wantAPIError(t, err, "AccessDeniedException", 400)
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Errorf("the call took %v, under the 50ms of latency", took)
	}
	// Another operation is not touched.
	if _, err := client.DescribeStreamSummary(ctx, &kinesis.DescribeStreamSummaryInput{StreamName: aws.String("s")}); err != nil {
		t.Errorf("DescribeStreamSummary: %v", err)
	}
}

// TestFaultsAreDeterministic checks that the same seed fails the same
// records.
func TestFaultsAreDeterministic(t *testing.T) {
	run := func(seed uint64) []int {
		emu := emulatortest.Start(t, emulator.Config{Seed: seed, Faults: []emulator.Fault{{Service: emulator.ServiceFirehose, Resource: "d", ThrottleRecords: 0.5}}})
		if err := emu.CreateDeliveryStream("d"); err != nil {
			t.Fatal(err)
		}
		var failed []int
		for range 3 {
			out, err := emu.FirehoseClient().PutRecordBatch(context.Background(), &firehose.PutRecordBatchInput{DeliveryStreamName: aws.String("d"), Records: firehoseBatch(20)})
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range out.RequestResponses {
				if r.ErrorCode != nil {
					failed = append(failed, i)
				}
			}
		}
		return failed
	}
	a, b, c := run(1), run(1), run(2)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("seed 1 failed %v, then %v", a, b)
	}
	if fmt.Sprint(a) == fmt.Sprint(c) {
		t.Errorf("seeds 1 and 2 both failed %v", a)
	}
}

func TestInvalidFaults(t *testing.T) {
	tests := []struct {
		name  string
		fault emulator.Fault
	}{
		{"unknown service", emulator.Fault{Service: "s3", Resource: "b"}},
		{"no resource", emulator.Fault{Service: emulator.ServiceKinesis}},
		{"a fraction over 1", emulator.Fault{Service: emulator.ServiceKinesis, Resource: "s", ThrottleRecords: 1.5}},
		{"NaN", emulator.Fault{Service: emulator.ServiceKinesis, Resource: "s", ServerErrors: math.NaN()}},
		{"per-record faults on logs", emulator.Fault{Service: emulator.ServiceLogs, Resource: "g", ThrottleRecords: 0.1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := emulator.New(emulator.Config{})
			if err != nil {
				t.Fatal(err)
			}
			if err := srv.SetFault(tt.fault); !errors.Is(err, emulator.ErrInvalidFault) {
				t.Errorf("SetFault = %v, want ErrInvalidFault", err)
			}
		})
	}
}
