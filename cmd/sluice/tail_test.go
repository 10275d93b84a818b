package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/sluicehq/sluice/internal/kinesalitetest"
)

// TestTailKinesis reads envelopes back from kinesalite by ARN and by
// destination id, filtered, one per line and indented.
func TestTailKinesis(t *testing.T) {
	e := newCLIEnv(t)
	kl := kinesalitetest.Start(t)
	for _, kv := range kl.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	// One shard: kinesalite never answers GetShardIterator AT_TIMESTAMP on an
	// empty shard.
	streamARN := kl.CreateStream(t, "tail-cli", 1)
	var entries []types.PutRecordsRequestEntry
	for i := range 6 {
		port := []int{443, 80}[i%2]
		data := fmt.Sprintf(`{"event_id":"ev_%d","event_type":"http_request_complete.v0","object":{"conn":{"server_port":%d}}}`, i, port)
		entries = append(entries, types.PutRecordsRequestEntry{Data: []byte(data), PartitionKey: aws.String(fmt.Sprint(i))})
	}
	entries = append(entries, types.PutRecordsRequestEntry{Data: []byte("not json"), PartitionKey: aws.String("x")})
	if _, err := kl.Client().PutRecords(t.Context(), &kinesis.PutRecordsInput{StreamName: aws.String("tail-cli"), Records: entries}); err != nil {
		t.Fatal(err)
	}
	dest := e.mustJSON("destinations", "create", "--kinesis-stream-arn", streamARN,
		"--aws-access-key-id", kinesalitetest.AccessKeyID, "--aws-secret-access-key", kinesalitetest.SecretAccessKey)

	for _, target := range []string{streamARN, dest["id"].(string)} {
		out := e.must("tail", target, "--since", "1h", "--follow=false", "--filter", "ev.object.conn.server_port == 443")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 {
			t.Fatalf("tail %s printed %d lines, want the 3 events on port 443:\n%s", target, len(lines), out)
		}
		for _, l := range lines {
			if !strings.Contains(l, `"server_port":443`) || strings.Contains(l, "\n") {
				t.Fatalf("tail %s printed %q", target, l)
			}
		}
	}
	out := e.must("tail", streamARN, "--since", "1h", "--follow=false", "--count", "1", "--pretty", "--filter", `ev.event_id == "ev_4"`)
	if want := "{\n  \"event_id\": \"ev_4\",\n"; !strings.HasPrefix(out, want) {
		t.Fatalf("tail --pretty printed %q, want it to start %q", out, want)
	}
	if out := e.must("tail", streamARN, "--since", "1h", "--follow=false"); strings.Count(out, "\n") != 7 || !strings.Contains(out, "not json\n") {
		t.Fatalf("tail without a filter printed %q, want every record", out)
	}
}

func TestTailErrors(t *testing.T) {
	e := newCLIEnv(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tail", "arn:aws:s3:::bucket"}, "not a Kinesis stream"},
		{[]string{"tail", "arn:aws:kinesis:us-east-1:123456789012:stream/s", "--since", "yesterday"}, "--since \"yesterday\""},
		{[]string{"tail", "arn:aws:kinesis:us-east-1:123456789012:stream/s", "--filter", "ev.x =="}, "--filter"},
		{[]string{"tail", "ed_3MUSoGsHjjU4QKWkisrUnnfCK1R"}, "404"},
	} {
		_, _, err := e.run(tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("sluice %s: %v, want an error saying %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"":                     {},
		"15m":                  now.Add(-15 * time.Minute),
		"2026-11-21T08:00:00Z": time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC),
	} {
		got, err := parseSince(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"-5m", "yesterday", "0s"} {
		if _, err := parseSince(in, now); err == nil {
			t.Errorf("parseSince(%q) took it", in)
		}
	}
}
