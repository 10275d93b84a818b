package emulator_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"

	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
)

// TestConcurrentCalls puts from several clients at once while faults are
// set and cleared and counters read, and checks that every record is either
// stored or reported failed, once.
func TestConcurrentCalls(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{Seed: 3})
	if err := emu.CreateStream("s", 3); err != nil {
		t.Fatal(err)
	}
	const writers, calls, batch = 4, 10, 50
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for w := range writers {
		wg.Go(func() {
			client := emu.KinesisClient()
			for c := range calls {
				out, err := client.PutRecords(context.Background(), &kinesis.PutRecordsInput{StreamName: aws.String("s"), Records: kinesisBatch(batch)})
				if err != nil {
					t.Errorf("writer %d call %d: %v", w, c, err)
					return
				}
				mu.Lock()
				failed += int(aws.ToInt32(out.FailedRecordCount))
				mu.Unlock()
			}
		})
	}
	wg.Go(func() {
		for i := range 50 {
			f := emulator.Fault{Service: emulator.ServiceKinesis, Resource: "s", ThrottleRecords: float64(i%3) / 4}
			if err := emu.SetFault(f); err != nil {
				t.Error(err)
			}
			_ = emu.AllCounters()
			emu.ClearFault(emulator.ServiceKinesis, "s")
		}
	})
	wg.Wait()
	stored, err := emu.KinesisRecords("s")
	if err != nil {
		t.Fatal(err)
	}
	c := emu.Counters(emulator.ServiceKinesis, "s")
	if total := writers * calls * batch; len(stored)+failed != total || c.RecordsAccepted != int64(len(stored)) || c.RecordsFailed != int64(failed) || c.Calls != writers*calls {
		t.Errorf("%d stored + %d failed, want %d in all; counters %+v", len(stored), failed, total, c.OperationCounters)
	}
}

func TestPagination(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{})
	ctx := t.Context()
	t.Run("ListShards", func(t *testing.T) {
		if err := emu.CreateStream("s", 5); err != nil {
			t.Fatal(err)
		}
		client := emu.KinesisClient()
		var ids []string
		in := &kinesis.ListShardsInput{StreamName: aws.String("s"), MaxResults: aws.Int32(2)}
		for range 10 {
			out, err := client.ListShards(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			for _, sh := range out.Shards {
				ids = append(ids, aws.ToString(sh.ShardId))
			}
			if out.NextToken == nil {
				break
			}
			in = &kinesis.ListShardsInput{NextToken: out.NextToken, MaxResults: aws.Int32(2)}
		}
		if fmt.Sprint(ids) != "[shardId-000000000000 shardId-000000000001 shardId-000000000002 shardId-000000000003 shardId-000000000004]" {
			t.Errorf("shards %v", ids)
		}
	})
	t.Run("DescribeLogStreams", func(t *testing.T) {
		if err := emu.CreateLogGroup("g", 0); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"c", "a", "b", "d", "e"} {
			if err := emu.CreateLogStream("g", name); err != nil {
				t.Fatal(err)
			}
		}
		client := emu.LogsClient()
		var names []string
		in := &cloudwatchlogs.DescribeLogStreamsInput{LogGroupName: aws.String("g"), Limit: aws.Int32(2), Descending: aws.Bool(true)}
		for range 10 {
			out, err := client.DescribeLogStreams(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			for _, ls := range out.LogStreams {
				names = append(names, aws.ToString(ls.LogStreamName))
			}
			if out.NextToken == nil {
				break
			}
			in.NextToken = out.NextToken
		}
		if fmt.Sprint(names) != "[e d c b a]" {
			t.Errorf("log streams %v", names)
		}
	})
}
