package emulator_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
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

// fakeClock is a clock a test moves: Config.Now, safe to read from the
// emulator's goroutines while the test moves it.
type fakeClock struct{ unixNano atomic.Int64 }

func newFakeClock(t time.Time) *fakeClock {
	c := &fakeClock{}
	c.set(t)
	return c
}

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.unixNano.Load()).UTC() }
func (c *fakeClock) set(t time.Time)         { c.unixNano.Store(t.UnixNano()) }
func (c *fakeClock) advance(d time.Duration) { c.unixNano.Add(int64(d)) }

var retentionStart = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// readShard reads a shard from an iterator of type kind (at seq for the
// sequence number types) and returns the data of its records, joined by
// commas.
func readShard(t *testing.T, client *kinesis.Client, stream string, kind kinesistypes.ShardIteratorType, seq string) string {
	t.Helper()
	in := &kinesis.GetShardIteratorInput{StreamName: aws.String(stream), ShardId: aws.String("shardId-000000000000"), ShardIteratorType: kind}
	if seq != "" {
		in.StartingSequenceNumber = aws.String(seq)
	}
	it, err := client.GetShardIterator(t.Context(), in)
	if err != nil {
		t.Fatalf("GetShardIterator %s: %v", kind, err)
	}
	out, err := client.GetRecords(t.Context(), &kinesis.GetRecordsInput{ShardIterator: it.ShardIterator})
	if err != nil {
		t.Fatalf("GetRecords: %v", err)
	}
	var data []string
	for _, r := range out.Records {
		data = append(data, string(r.Data))
	}
	return strings.Join(data, ",")
}

// TestKinesisRetention checks a stream keeps its records 24 hours, its
// retention period, and then trims them: TRIM_HORIZON starts at the oldest
// kept, and an iterator at a trimmed record, made before or after the
// trim, reads from there.
func TestKinesisRetention(t *testing.T) {
	clock := newFakeClock(retentionStart)
	emu := emulatortest.Start(t, emulator.Config{Now: clock.now})
	client := emu.KinesisClient()
	if err := emu.CreateStream("s", 1); err != nil {
		t.Fatal(err)
	}
	var seqs []string
	for _, data := range []string{"a", "b", "c"} {
		out, err := client.PutRecord(t.Context(), &kinesis.PutRecordInput{StreamName: aws.String("s"), PartitionKey: aws.String("k"), Data: []byte(data)})
		if err != nil {
			t.Fatalf("PutRecord: %v", err)
		}
		seqs = append(seqs, aws.ToString(out.SequenceNumber))
		clock.advance(time.Hour)
	}
	// a at 0 h, b at 1 h, c at 2 h; now 3 h.
	summary, err := client.DescribeStreamSummary(t.Context(), &kinesis.DescribeStreamSummaryInput{StreamName: aws.String("s")})
	if err != nil || aws.ToInt32(summary.StreamDescriptionSummary.RetentionPeriodHours) != 24 {
		t.Fatalf("DescribeStreamSummary: %v, %+v", err, summary)
	}
	early, err := client.GetShardIterator(t.Context(), &kinesis.GetShardIteratorInput{StreamName: aws.String("s"), ShardId: aws.String("shardId-000000000000"),
		ShardIteratorType: kinesistypes.ShardIteratorTypeAtSequenceNumber, StartingSequenceNumber: aws.String(seqs[0])})
	if err != nil {
		t.Fatalf("GetShardIterator: %v", err)
	}

	clock.set(retentionStart.Add(24 * time.Hour))
	if got := readShard(t, client, "s", kinesistypes.ShardIteratorTypeTrimHorizon, ""); got != "a,b,c" {
		t.Errorf("at 24 h, TRIM_HORIZON reads %q, want a,b,c: a record is kept for exactly its retention period", got)
	}
	clock.set(retentionStart.Add(25*time.Hour + time.Millisecond))
	tests := []struct {
		kind kinesistypes.ShardIteratorType
		seq  string
		want string
	}{
		{kinesistypes.ShardIteratorTypeTrimHorizon, "", "c"},
		{kinesistypes.ShardIteratorTypeAtSequenceNumber, seqs[0], "c"},
		{kinesistypes.ShardIteratorTypeAfterSequenceNumber, seqs[1], "c"},
		{kinesistypes.ShardIteratorTypeAtSequenceNumber, seqs[2], "c"},
		{kinesistypes.ShardIteratorTypeLatest, "", ""},
	}
	for _, tt := range tests {
		if got := readShard(t, client, "s", tt.kind, tt.seq); got != tt.want {
			t.Errorf("at 25 h, %s %s reads %q, want %q", tt.kind, tt.seq, got, tt.want)
		}
	}
	// The iterator of before the trim: 25 h old, so expired; one made
	// from it 4 minutes before the trim reads from the trim horizon.
	if _, err := client.GetRecords(t.Context(), &kinesis.GetRecordsInput{ShardIterator: early.ShardIterator}); err == nil {
		t.Error("GetRecords with an iterator of 25 h ago: no error, want ExpiredIteratorException")
	}
	clock.set(retentionStart.Add(25*time.Hour - 4*time.Minute))
	fresh, err := client.GetShardIterator(t.Context(), &kinesis.GetShardIteratorInput{StreamName: aws.String("s"), ShardId: aws.String("shardId-000000000000"),
		ShardIteratorType: kinesistypes.ShardIteratorTypeAtSequenceNumber, StartingSequenceNumber: aws.String(seqs[1])})
	if err != nil {
		t.Fatalf("GetShardIterator: %v", err)
	}
	clock.set(retentionStart.Add(25*time.Hour + time.Millisecond))
	out, err := client.GetRecords(t.Context(), &kinesis.GetRecordsInput{ShardIterator: fresh.ShardIterator})
	if err != nil || len(out.Records) != 1 || string(out.Records[0].Data) != "c" {
		t.Fatalf("GetRecords at b after b's trim: %v, %d records, want c", err, len(out.Records))
	}

	clock.set(retentionStart.Add(27 * time.Hour))
	records, err := emu.KinesisRecords("s")
	if err != nil || len(records) != 0 {
		t.Errorf("KinesisRecords at 27 h = %d records, %v; want none", len(records), err)
	}
	if got := readShard(t, client, "s", kinesistypes.ShardIteratorTypeAtSequenceNumber, seqs[2]); got != "" {
		t.Errorf("at 27 h, AT_SEQUENCE_NUMBER of the last record reads %q, want nothing", got)
	}
}

// TestKinesisRetentionPeriod checks IncreaseStreamRetentionPeriod and
// DecreaseStreamRetentionPeriod: a longer period keeps records longer, a
// shorter one trims at once, both are kept across a restart, and a period
// out of range or the wrong way is refused as Kinesis refuses it.
func TestKinesisRetentionPeriod(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock(retentionStart)
	emu := emulatortest.Start(t, emulator.Config{Now: clock.now, DataDir: dir})
	client := emu.KinesisClient()
	if err := emu.CreateStream("s", 1); err != nil {
		t.Fatal(err)
	}
	period := func(t *testing.T, client *kinesis.Client) int32 {
		t.Helper()
		out, err := client.DescribeStreamSummary(t.Context(), &kinesis.DescribeStreamSummaryInput{StreamName: aws.String("s")})
		if err != nil {
			t.Fatalf("DescribeStreamSummary: %v", err)
		}
		return aws.ToInt32(out.StreamDescriptionSummary.RetentionPeriodHours)
	}
	if _, err := client.IncreaseStreamRetentionPeriod(t.Context(), &kinesis.IncreaseStreamRetentionPeriodInput{StreamName: aws.String("s"), RetentionPeriodHours: aws.Int32(72)}); err != nil {
		t.Fatalf("IncreaseStreamRetentionPeriod: %v", err)
	}
	for _, data := range []string{"a", "b"} {
		if _, err := client.PutRecord(t.Context(), &kinesis.PutRecordInput{StreamName: aws.String("s"), PartitionKey: aws.String("k"), Data: []byte(data)}); err != nil {
			t.Fatalf("PutRecord: %v", err)
		}
		clock.advance(24 * time.Hour)
	}
	// a at 0 h, b at 24 h; now 48 h.
	if got := readShard(t, client, "s", kinesistypes.ShardIteratorTypeTrimHorizon, ""); got != "a,b" {
		t.Errorf("with 72 hours, at 48 h the stream keeps %q, want a,b", got)
	}
	if err := emu.Stop(); err != nil {
		t.Fatal(err)
	}
	emu = emulatortest.Start(t, emulator.Config{Now: clock.now, DataDir: dir})
	client = emu.KinesisClient()
	if got := period(t, client); got != 72 {
		t.Errorf("after a restart, RetentionPeriodHours = %d, want 72", got)
	}
	if _, err := client.DecreaseStreamRetentionPeriod(t.Context(), &kinesis.DecreaseStreamRetentionPeriodInput{StreamName: aws.String("s"), RetentionPeriodHours: aws.Int32(36)}); err != nil {
		t.Fatalf("DecreaseStreamRetentionPeriod: %v", err)
	}
	if got := readShard(t, client, "s", kinesistypes.ShardIteratorTypeTrimHorizon, ""); got != "b" || period(t, client) != 36 {
		t.Errorf("with 36 hours, at 48 h the stream keeps %q (a period of %d hours), want b", got, period(t, client))
	}

	increase := func(hours int32) error {
		_, err := client.IncreaseStreamRetentionPeriod(t.Context(), &kinesis.IncreaseStreamRetentionPeriodInput{StreamName: aws.String("s"), RetentionPeriodHours: aws.Int32(hours)})
		return err
	}
	decrease := func(hours int32) error {
		_, err := client.DecreaseStreamRetentionPeriod(t.Context(), &kinesis.DecreaseStreamRetentionPeriodInput{StreamName: aws.String("s"), RetentionPeriodHours: aws.Int32(hours)})
		return err
	}
	wantAPIError(t, increase(24), "InvalidArgumentException", 400)
	wantAPIError(t, decrease(48), "InvalidArgumentException", 400)
	wantAPIError(t, decrease(23), "InvalidArgumentException", 400)
	wantAPIError(t, increase(8761), "ValidationException", 400)
	_, err := client.IncreaseStreamRetentionPeriod(t.Context(), &kinesis.IncreaseStreamRetentionPeriodInput{StreamName: aws.String("none"), RetentionPeriodHours: aws.Int32(48)})
	wantAPIError(t, err, "ResourceNotFoundException", 400)
	if got := period(t, client); got != 36 {
		t.Errorf("after refused changes, RetentionPeriodHours = %d, want 36", got)
	}
}

// TestFirehoseRetention checks a delivery stream keeps a record 24 hours,
// and counts those it dropped then.
func TestFirehoseRetention(t *testing.T) {
	clock := newFakeClock(retentionStart)
	emu := emulatortest.Start(t, emulator.Config{Now: clock.now, AutoCreate: true})
	client := emu.FirehoseClient()
	for _, data := range []string{"a", "b"} {
		if _, err := client.PutRecord(t.Context(), &firehose.PutRecordInput{DeliveryStreamName: aws.String("d"), Record: &firehosetypes.Record{Data: []byte(data)}}); err != nil {
			t.Fatalf("PutRecord: %v", err)
		}
		clock.advance(time.Hour)
	}
	clock.set(retentionStart.Add(24 * time.Hour))
	if records, dropped, err := emu.FirehoseRecords("d"); err != nil || len(records) != 2 || dropped != 0 {
		t.Errorf("at 24 h: %d records, %d dropped, %v; want 2 and 0", len(records), dropped, err)
	}
	clock.set(retentionStart.Add(24*time.Hour + time.Millisecond))
	if records, dropped, err := emu.FirehoseRecords("d"); err != nil || len(records) != 1 || string(records[0].Data) != "b" || dropped != 1 {
		t.Errorf("past 24 h: %d records, %d dropped, %v; want b, and 1 dropped", len(records), dropped, err)
	}
}

// logMessages returns the messages GetLogEvents answers of a log stream,
// joined by commas.
func logMessages(t *testing.T, client *cloudwatchlogs.Client, group, stream string) string {
	t.Helper()
	out, err := client.GetLogEvents(t.Context(), &cloudwatchlogs.GetLogEventsInput{LogGroupName: aws.String(group), LogStreamName: aws.String(stream), StartFromHead: aws.Bool(true)})
	if err != nil {
		t.Fatalf("GetLogEvents: %v", err)
	}
	var messages []string
	for _, e := range out.Events {
		messages = append(messages, aws.ToString(e.Message))
	}
	return strings.Join(messages, ",")
}

// putLog puts one event of message, stamped at, into group/stream.
func putLog(t *testing.T, client *cloudwatchlogs.Client, group, stream, message string, at time.Time) {
	t.Helper()
	_, err := client.PutLogEvents(t.Context(), &cloudwatchlogs.PutLogEventsInput{LogGroupName: aws.String(group), LogStreamName: aws.String(stream),
		LogEvents: []logstypes.InputLogEvent{{Timestamp: aws.Int64(at.UnixMilli()), Message: aws.String(message)}}})
	if err != nil {
		t.Fatalf("PutLogEvents: %v", err)
	}
}

// TestLogsRetention checks a log group drops the events older than its
// retention, from every stream, by their timestamps; that a group without
// a retention keeps them; and that PutRetentionPolicy applies at once.
func TestLogsRetention(t *testing.T) {
	clock := newFakeClock(retentionStart)
	emu := emulatortest.Start(t, emulator.Config{Now: clock.now, AutoCreate: true})
	client := emu.LogsClient()
	if err := emu.CreateLogGroup("kept", 1); err != nil {
		t.Fatal(err)
	}
	// An event stamped an hour ago, one now, in two streams; and the same
	// in a group without retention.
	for _, group := range []string{"kept", "forever"} {
		putLog(t, client, group, "one", "old", retentionStart.Add(-time.Hour))
		putLog(t, client, group, "two", "new", retentionStart)
	}
	clock.set(retentionStart.Add(23 * time.Hour))
	if got := logMessages(t, client, "kept", "one"); got != "old" {
		t.Errorf("at 23 h, stream one keeps %q, want old", got)
	}
	clock.set(retentionStart.Add(23*time.Hour + time.Millisecond))
	if got := logMessages(t, client, "kept", "one"); got != "" {
		t.Errorf("past a day after its timestamp, stream one keeps %q, want nothing", got)
	}
	if got := logMessages(t, client, "kept", "two"); got != "new" {
		t.Errorf("stream two keeps %q, want new", got)
	}
	groups, err := client.DescribeLogGroups(t.Context(), &cloudwatchlogs.DescribeLogGroupsInput{LogGroupNamePrefix: aws.String("kept")})
	if err != nil || len(groups.LogGroups) != 1 || aws.ToInt64(groups.LogGroups[0].StoredBytes) != int64(len("new")) {
		t.Errorf("DescribeLogGroups: %v, %+v; want 3 stored bytes", err, groups)
	}
	filtered, err := client.FilterLogEvents(t.Context(), &cloudwatchlogs.FilterLogEventsInput{LogGroupName: aws.String("kept")})
	if err != nil || len(filtered.Events) != 1 {
		t.Errorf("FilterLogEvents: %v, %d events; want new alone", err, len(filtered.Events))
	}

	clock.set(retentionStart.Add(10 * 24 * time.Hour))
	if got := logMessages(t, client, "forever", "one") + "|" + logMessages(t, client, "forever", "two"); got != "old|new" {
		t.Errorf("a group without retention keeps %q after 10 days, want old|new", got)
	}
	if _, err := client.PutRetentionPolicy(t.Context(), &cloudwatchlogs.PutRetentionPolicyInput{LogGroupName: aws.String("forever"), RetentionInDays: aws.Int32(7)}); err != nil {
		t.Fatalf("PutRetentionPolicy: %v", err)
	}
	events, err := emu.LogEvents("forever", "two")
	if err != nil || len(events) != 0 {
		t.Errorf("after a retention of 7 days, 10 days on: %d events, %v; want none", len(events), err)
	}
}

// TestLogsRetentionOfPendingEvents checks the events put out of timestamp
// order, which wait to be merged until the next read, expire too.
func TestLogsRetentionOfPendingEvents(t *testing.T) {
	clock := newFakeClock(retentionStart)
	emu := emulatortest.Start(t, emulator.Config{Now: clock.now, AutoCreate: true})
	client := emu.LogsClient()
	if err := emu.CreateLogGroup("g", 1); err != nil {
		t.Fatal(err)
	}
	putLog(t, client, "g", "s", "b", retentionStart)
	putLog(t, client, "g", "s", "a", retentionStart.Add(-time.Hour)) // out of order: pending
	clock.set(retentionStart.Add(23*time.Hour + time.Millisecond))
	putLog(t, client, "g", "s", "c", retentionStart.Add(23*time.Hour))
	if got := logMessages(t, client, "g", "s"); got != "b,c" {
		t.Errorf("kept %q, want b,c", got)
	}
}

// TestLogGroupByteBound checks the byte bound applies to a log group, not
// to each of its streams: past it, the oldest events by timestamp go
// first, whichever stream holds them.
func TestLogGroupByteBound(t *testing.T) {
	clock := newFakeClock(retentionStart)
	emu := emulatortest.Start(t, emulator.Config{Now: clock.now, AutoCreate: true, MaxStoredBytes: 10})
	client := emu.LogsClient()
	// Five events of 3 bytes, alternating streams, stamped out of order
	// across them: the oldest stamps are a1 and b1.
	putLog(t, client, "g", "a", "a1_", retentionStart.Add(-5*time.Minute))
	putLog(t, client, "g", "b", "b2_", retentionStart.Add(-3*time.Minute))
	putLog(t, client, "g", "b", "b1_", retentionStart.Add(-4*time.Minute)) // pending in b
	putLog(t, client, "g", "a", "a2_", retentionStart.Add(-2*time.Minute))
	if got := logMessages(t, client, "g", "a") + "|" + logMessages(t, client, "g", "b"); got != "a2_|b1_,b2_" {
		t.Errorf("with 12 bytes put and a bound of 10, kept %q, want a2_|b1_,b2_", got)
	}
	putLog(t, client, "g", "a", "a3_", retentionStart.Add(-time.Minute))
	if got := logMessages(t, client, "g", "a") + "|" + logMessages(t, client, "g", "b"); got != "a2_,a3_|b2_" {
		t.Errorf("kept %q, want a2_,a3_|b2_", got)
	}
}

// TestByteBound checks each Kinesis stream and delivery stream keeps at
// most MaxStoredBytes, dropping its oldest records first, across shards.
func TestByteBound(t *testing.T) {
	clock := newFakeClock(retentionStart)
	emu := emulatortest.Start(t, emulator.Config{Now: clock.now, AutoCreate: true, MaxStoredBytes: 100})
	if err := emu.CreateStream("s", 4); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		clock.advance(time.Second)
		// 19 bytes of data, 1 of partition key: 20 bytes a record.
		data := fmt.Appendf(nil, "record %02d %s", i, strings.Repeat(".", 9))
		if _, err := emu.KinesisClient().PutRecord(t.Context(), &kinesis.PutRecordInput{StreamName: aws.String("s"), PartitionKey: aws.String(fmt.Sprint(i % 10)), Data: data}); err != nil {
			t.Fatalf("PutRecord: %v", err)
		}
		if _, err := emu.FirehoseClient().PutRecord(t.Context(), &firehose.PutRecordInput{DeliveryStreamName: aws.String("d"), Record: &firehosetypes.Record{Data: data[:10]}}); err != nil {
			t.Fatalf("PutRecord: %v", err)
		}
	}
	records, err := emu.KinesisRecords("s")
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, r := range records {
		kept = append(kept, string(r.Data[7:9]))
	}
	if len(kept) != 5 {
		t.Errorf("the stream keeps records %v, want the 5 newest (100 bytes)", kept)
	}
	for _, k := range kept {
		if k < "15" {
			t.Errorf("the stream keeps record %s, not one of the 5 newest", k)
		}
	}
	firehoseRecords, dropped, err := emu.FirehoseRecords("d")
	if err != nil || len(firehoseRecords) != 10 || dropped != 10 || string(firehoseRecords[0].Data) != "record 10 " {
		t.Errorf("the delivery stream keeps %d records from %q, dropped %d, %v; want 10 from record 10, 10 dropped", len(firehoseRecords), firehoseRecords[0].Data, dropped, err)
	}
}

// TestDataDirAfterTrim checks the state file holds only what is kept once
// records expire, and that an emulator started on it later drops what
// expired meanwhile and bounds the streams it loaded as the first did.
func TestDataDirAfterTrim(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock(retentionStart)
	cfg := emulator.Config{DataDir: dir, Now: clock.now, AutoCreate: true, MaxStoredBytes: 1 << 20}
	emu := emulatortest.Start(t, cfg)
	if err := emu.CreateStream("s", 2); err != nil {
		t.Fatal(err)
	}
	if err := emu.CreateLogGroup("g", 1); err != nil {
		t.Fatal(err)
	}
	old := bytes.Repeat([]byte("o"), 1000)
	for i := range 200 {
		putAll(t, emu, fmt.Sprint(i), old, clock.now())
	}
	clock.advance(20 * time.Hour)
	putAll(t, emu, "k", []byte("new"), clock.now())
	if err := emu.Save(); err != nil {
		t.Fatal(err)
	}
	full := stateSize(t, dir)
	clock.advance(5 * time.Hour) // the 200 old records are past their day
	putAll(t, emu, "k", []byte("newer"), clock.now())
	if err := emu.Stop(); err != nil {
		t.Fatal(err)
	}
	if trimmed := stateSize(t, dir); trimmed > full/20 {
		t.Errorf("state.json is %d bytes once 600 records of 1 KB expired, %d before: it keeps them", trimmed, full)
	}

	clock.advance(20 * time.Hour) // "new" is past its day too
	cfg.MaxStoredBytes = 10
	emu = emulatortest.Start(t, cfg)
	records, err := emu.KinesisRecords("s")
	if err != nil || len(records) != 1 || string(records[0].Data) != "newer" {
		t.Errorf("Kinesis after the restart: %v, %d records; want newer", err, len(records))
	}
	firehoseRecords, _, err := emu.FirehoseRecords("d")
	if err != nil || len(firehoseRecords) != 1 || string(firehoseRecords[0].Data) != "newer" {
		t.Errorf("Firehose after the restart: %v, %d records; want newer", err, len(firehoseRecords))
	}
	events, err := emu.LogEvents("g", "s")
	if err != nil || len(events) != 1 || events[0].Message != "newer" {
		t.Errorf("CloudWatch Logs after the restart: %v, %d events; want newer", err, len(events))
	}
	// The order of the records loaded: the oldest go first across shards.
	putAll(t, emu, "o", []byte("newest"), clock.now())
	if records, err := emu.KinesisRecords("s"); err != nil || len(records) != 1 || string(records[0].Data) != "newest" {
		t.Errorf("Kinesis past the bound after the restart: %v, %+v; want newest", err, records)
	}
}

// putAll puts data to stream s (partition key key), delivery stream d and
// log stream g/s, stamped at.
func putAll(t *testing.T, emu *emulatortest.Emulator, key string, data []byte, at time.Time) {
	t.Helper()
	if _, err := emu.KinesisClient().PutRecord(t.Context(), &kinesis.PutRecordInput{StreamName: aws.String("s"), PartitionKey: aws.String(key), Data: data}); err != nil {
		t.Fatalf("PutRecord: %v", err)
	}
	if _, err := emu.FirehoseClient().PutRecord(t.Context(), &firehose.PutRecordInput{DeliveryStreamName: aws.String("d"), Record: &firehosetypes.Record{Data: data}}); err != nil {
		t.Fatalf("PutRecord: %v", err)
	}
	putLog(t, emu.LogsClient(), "g", "s", string(data), at)
}

func stateSize(t *testing.T, dir string) int64 {
	t.Helper()
	info, err := os.Stat(filepath.Join(dir, emulator.StateFile))
	if err != nil {
		t.Fatal(err)
	}
	return info.Size()
}
