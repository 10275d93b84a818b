package emulator_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	logstypes "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/aws-sdk-go-v2/service/firehose"
	firehosetypes "github.com/aws/aws-sdk-go-v2/service/firehose/types"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	kinesistypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
)

// TestDataDirKeepsStateAcrossRestarts writes to the three services of an
// emulator with a DataDir, stops it, starts another on the same directory
// and reads everything back through the SDK: streams, delivery streams,
// log groups, their records, and the counters that number new ones.
func TestDataDirKeepsStateAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	ctx := t.Context()
	now := time.Now()
	emu := emulatortest.Start(t, emulator.Config{DataDir: dir, AutoCreate: true})

	kc := emu.KinesisClient()
	if _, err := kc.CreateStream(ctx, &kinesis.CreateStreamInput{StreamName: aws.String("orders"), ShardCount: aws.Int32(2)}); err != nil {
		t.Fatalf("CreateStream: %v", err)
	}
	var entries []kinesistypes.PutRecordsRequestEntry
	for _, key := range []string{"a", "b", "c", "d"} {
		entries = append(entries, kinesistypes.PutRecordsRequestEntry{PartitionKey: aws.String(key), Data: []byte("order " + key)})
	}
	put, err := kc.PutRecords(ctx, &kinesis.PutRecordsInput{StreamName: aws.String("orders"), Records: entries})
	if err != nil {
		t.Fatalf("PutRecords: %v", err)
	}
	iterator, err := kc.GetShardIterator(ctx, &kinesis.GetShardIteratorInput{StreamName: aws.String("orders"), ShardId: put.Records[0].ShardId, ShardIteratorType: kinesistypes.ShardIteratorTypeTrimHorizon})
	if err != nil {
		t.Fatalf("GetShardIterator: %v", err)
	}
	kinesisBefore, err := emu.KinesisRecords("orders")
	if err != nil {
		t.Fatal(err)
	}

	fc := emu.FirehoseClient()
	if _, err := fc.PutRecordBatch(ctx, &firehose.PutRecordBatchInput{DeliveryStreamName: aws.String("events"), Records: []firehosetypes.Record{{Data: []byte("one\n")}, {Data: []byte("two\n")}}}); err != nil {
		t.Fatalf("PutRecordBatch: %v", err)
	}
	firehoseBefore, _, err := emu.FirehoseRecords("events")
	if err != nil {
		t.Fatal(err)
	}

	lc := emu.LogsClient()
	group, stream := aws.String("/sluice/edge"), aws.String("sub_1")
	if _, err := lc.PutLogEvents(ctx, &cloudwatchlogs.PutLogEventsInput{LogGroupName: group, LogStreamName: stream, LogEvents: []logstypes.InputLogEvent{
		{Timestamp: aws.Int64(now.Add(-time.Minute).UnixMilli()), Message: aws.String(`{"event_id": "ev_1"}`)},
		{Timestamp: aws.Int64(now.UnixMilli()), Message: aws.String(`{"event_id": "ev_2"}`)},
	}}); err != nil {
		t.Fatalf("PutLogEvents: %v", err)
	}
	if _, err := lc.PutRetentionPolicy(ctx, &cloudwatchlogs.PutRetentionPolicyInput{LogGroupName: group, RetentionInDays: aws.Int32(7)}); err != nil {
		t.Fatalf("PutRetentionPolicy: %v", err)
	}
	if err := emu.CreateLogStream("/sluice/edge", "empty"); err != nil {
		t.Fatal(err)
	}
	logsBefore, err := emu.LogEvents("/sluice/edge", "sub_1")
	if err != nil {
		t.Fatal(err)
	}

	if err := emu.Stop(); err != nil {
		t.Fatalf("stopping: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, emulator.StateFile)); err != nil {
		t.Fatalf("no state file after stopping: %v", err)
	}

	// Without AutoCreate: each resource must exist.
	emu = emulatortest.Start(t, emulator.Config{DataDir: dir})
	kc, fc, lc = emu.KinesisClient(), emu.FirehoseClient(), emu.LogsClient()

	summary, err := kc.DescribeStreamSummary(ctx, &kinesis.DescribeStreamSummaryInput{StreamName: aws.String("orders")})
	if err != nil {
		t.Fatalf("DescribeStreamSummary after the restart: %v", err)
	}
	if n := aws.ToInt32(summary.StreamDescriptionSummary.OpenShardCount); n != 2 {
		t.Errorf("%d shards after the restart, want 2", n)
	}
	if got, _ := emu.KinesisRecords("orders"); !slices.EqualFunc(got, kinesisBefore, sameKinesisRecord) {
		t.Errorf("Kinesis records after the restart:\n%+v\nwant\n%+v", got, kinesisBefore)
	}
	// An iterator of the first run reads on in the second.
	records, err := kc.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: iterator.ShardIterator})
	if err != nil {
		t.Fatalf("GetRecords with an iterator of before the restart: %v", err)
	}
	if len(records.Records) == 0 {
		t.Error("GetRecords with an iterator of before the restart: no records")
	}
	// New records are numbered after the old ones.
	again, err := kc.PutRecord(ctx, &kinesis.PutRecordInput{StreamName: aws.String("orders"), PartitionKey: aws.String("a"), Data: []byte("order a2")})
	if err != nil {
		t.Fatalf("PutRecord: %v", err)
	}
	for _, r := range kinesisBefore {
		if r.ShardID == aws.ToString(again.ShardId) && r.SequenceNumber >= aws.ToString(again.SequenceNumber) {
			t.Errorf("sequence number %s after the restart is not after %s", aws.ToString(again.SequenceNumber), r.SequenceNumber)
		}
	}

	if _, err := fc.DescribeDeliveryStream(ctx, &firehose.DescribeDeliveryStreamInput{DeliveryStreamName: aws.String("events")}); err != nil {
		t.Fatalf("DescribeDeliveryStream after the restart: %v", err)
	}
	if got, _, _ := emu.FirehoseRecords("events"); !slices.EqualFunc(got, firehoseBefore, sameFirehoseRecord) {
		t.Errorf("Firehose records after the restart: %+v, want %+v", got, firehoseBefore)
	}
	if _, err := fc.PutRecord(ctx, &firehose.PutRecordInput{DeliveryStreamName: aws.String("events"), Record: &firehosetypes.Record{Data: []byte("three\n")}}); err != nil {
		t.Fatalf("PutRecord: %v", err)
	}
	if got, _, _ := emu.FirehoseRecords("events"); len(got) != 3 || got[2].RecordID == got[1].RecordID {
		t.Errorf("Firehose records after a put: %+v", got)
	}

	groups, err := lc.DescribeLogGroups(ctx, &cloudwatchlogs.DescribeLogGroupsInput{})
	if err != nil {
		t.Fatalf("DescribeLogGroups: %v", err)
	}
	if len(groups.LogGroups) != 1 || aws.ToInt32(groups.LogGroups[0].RetentionInDays) != 7 {
		t.Errorf("log groups after the restart: %+v", groups.LogGroups)
	}
	if got, _ := emu.LogStreams("/sluice/edge"); !slices.Equal(got, []string{"empty", "sub_1"}) {
		t.Errorf("log streams after the restart: %v", got)
	}
	if got, _ := emu.LogEvents("/sluice/edge", "sub_1"); !slices.Equal(got, logsBefore) {
		t.Errorf("log events after the restart: %+v, want %+v", got, logsBefore)
	}
	filtered, err := lc.FilterLogEvents(ctx, &cloudwatchlogs.FilterLogEventsInput{LogGroupName: group, FilterPattern: aws.String(`{ $.event_id = "ev_2" }`)})
	if err != nil || len(filtered.Events) != 1 {
		t.Fatalf("FilterLogEvents after the restart: %v, %+v", err, filtered)
	}
}

func sameKinesisRecord(a, b emulator.KinesisRecord) bool {
	return a.ShardID == b.ShardID && a.SequenceNumber == b.SequenceNumber && a.PartitionKey == b.PartitionKey && string(a.Data) == string(b.Data) && a.Arrival.Equal(b.Arrival)
}

func sameFirehoseRecord(a, b emulator.FirehoseRecord) bool {
	return a.RecordID == b.RecordID && string(a.Data) == string(b.Data) && a.Arrival.Equal(b.Arrival)
}

// TestDataDirSavesWhileServing checks the state is saved SaveDelay after
// a change, without a stop: what a crash of the emulator keeps.
func TestDataDirSavesWhileServing(t *testing.T) {
	dir := t.TempDir()
	emu := emulatortest.Start(t, emulator.Config{DataDir: dir, SaveDelay: 10 * time.Millisecond})
	if err := emu.CreateDeliveryStream("events"); err != nil {
		t.Fatal(err)
	}
	if _, err := emu.FirehoseClient().PutRecord(t.Context(), &firehose.PutRecordInput{DeliveryStreamName: aws.String("events"), Record: &firehosetypes.Record{Data: []byte("kept")}}); err != nil {
		t.Fatalf("PutRecord: %v", err)
	}
	check.Eventually(t, 10*time.Second, "the record put saved", func() (string, bool) {
		// Another emulator reads a copy of what was saved (the directory
		// is the serving one's).
		copied := t.TempDir()
		if state, err := os.ReadFile(filepath.Join(dir, emulator.StateFile)); err == nil {
			if err := os.WriteFile(filepath.Join(copied, emulator.StateFile), state, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		reader, err := emulator.New(emulator.Config{DataDir: copied})
		if err != nil {
			t.Fatal(err)
		}
		records, _, err := reader.FirehoseRecords("events")
		if err := reader.Close(); err != nil {
			t.Fatal(err)
		}
		if err != nil {
			return err.Error(), false
		}
		return fmt.Sprintf("%d records", len(records)), len(records) == 1 && string(records[0].Data) == "kept"
	})
}

// TestDataDirCorruptState checks that a state file the emulator cannot
// read stops New with an error naming the file and what to do.
func TestDataDirCorruptState(t *testing.T) {
	tests := map[string]string{
		"not JSON":            `{"version": 1, "kinesis_streams": [`,
		"a newer version":     `{"version": 99}`,
		"an impossible state": `{"version": 1, "kinesis_streams": [{"name": "orders", "shards": []}]}`,
	}
	for name, content := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, emulator.StateFile)
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := emulator.New(emulator.Config{DataDir: dir})
			if err == nil {
				t.Fatal("New: no error")
			}
			if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "move it away") {
				t.Errorf("error %q does not name the file and what to do", msg)
			}
			// The refusal released the directory.
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			emu, err := emulator.New(emulator.Config{DataDir: dir})
			if err != nil {
				t.Fatalf("New once the file is moved away: %v", err)
			}
			if err := emu.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestDataDirRemovesTemporaryFiles checks that the temporary file of a
// save a crash interrupted is removed at the next start.
func TestDataDirRemovesTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "."+emulator.StateFile+".123456.tmp")
	if err := os.WriteFile(stale, []byte(`{"version": 1, "kinesis`), 0o600); err != nil {
		t.Fatal(err)
	}
	emu, err := emulator.New(emulator.Config{DataDir: dir})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = emu.Close() })
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the temporary file of an interrupted save is still there: %v", err)
	}
}

// TestDataDirLocked checks that two emulators never share a DataDir: the
// second New is refused, naming the directory and the process holding
// it, until the first is closed or its Serve returns.
func TestDataDirLocked(t *testing.T) {
	dir := t.TempDir()
	first, err := emulator.New(emulator.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	_, err = emulator.New(emulator.Config{DataDir: dir})
	var inUse *emulator.DataDirInUseError
	if !errors.As(err, &inUse) || inUse.Dir != dir || inUse.PID != os.Getpid() {
		t.Fatalf("a second New on the directory: %v, want a DataDirInUseError naming it and pid %d", err, os.Getpid())
	}
	if want := fmt.Sprintf("%s is in use by another emulator or sluice serve --dev (pid %d)", dir, os.Getpid()); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if err := first.CreateDeliveryStream("events"); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := first.Close(); err != nil {
		t.Fatalf("Close again: %v", err)
	}

	// Once closed, the directory is another's, with what the first saved
	// at Close.
	served := emulatortest.Start(t, emulator.Config{DataDir: dir})
	if _, _, err := served.FirehoseRecords("events"); err != nil {
		t.Fatalf("the delivery stream made before Close: %v", err)
	}
	if _, err := emulator.New(emulator.Config{DataDir: dir}); !errors.As(err, &inUse) {
		t.Fatalf("New beside a serving emulator: %v, want a DataDirInUseError", err)
	}
	if err := served.Stop(); err != nil {
		t.Fatal(err)
	}
	// The end of Serve released it too; a change made after is not saved,
	// and Save says so.
	if err := served.CreateDeliveryStream("late"); err != nil {
		t.Fatal(err)
	}
	if err := served.Save(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Save after Serve returned: %v, want it refused", err)
	}
	again, err := emulator.New(emulator.Config{DataDir: dir})
	if err != nil {
		t.Fatalf("New once Serve returned: %v", err)
	}
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
}
