package main

import (
	"encoding/json"
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

	// The subscriptions' dialect: ev is the object, the envelope's fields
	// under envelope.
	for _, filter := range []string{
		"ev.conn.server_port == 443",
		`envelope.event_type == "http_request_complete.v0" && ev.conn.server_port == 443`,
	} {
		for _, target := range []string{streamARN, dest["id"].(string)} {
			out := e.must("tail", target, "--since", "1h", "--follow=false", "--filter", filter)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 3 {
				t.Fatalf("tail %s --filter %s printed %d lines, want the 3 events on port 443:\n%s", target, filter, len(lines), out)
			}
			for _, l := range lines {
				// The line format: time, kind, id, object.
				if !strings.HasPrefix(l, "- http_request_complete.v0 ev_") || !strings.HasSuffix(l, ` {"conn":{"server_port":443}}`) {
					t.Fatalf("tail %s printed %q", target, l)
				}
			}
		}
	}
	out := e.must("tail", streamARN, "--since", "1h", "--follow=false", "--count", "1", "--pretty", "--filter", `envelope.event_id == "ev_4"`)
	if want := "{\n  \"event_id\": \"ev_4\",\n"; !strings.HasPrefix(out, want) {
		t.Fatalf("tail --pretty printed %q, want it to start %q", out, want)
	}
	if out := e.must("tail", streamARN, "--since", "1h", "--follow=false"); strings.Count(out, "\n") != 7 || !strings.Contains(out, "not json\n") {
		t.Fatalf("tail without a filter printed %q, want every record", out)
	}
}

// TestTailJSON: --json prints each event's JSON, one document a line,
// and leaves out (saying so) a record that is not JSON.
func TestTailJSON(t *testing.T) {
	e := newCLIEnv(t)
	kl := kinesalitetest.Start(t)
	for _, kv := range kl.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	streamARN := kl.CreateStream(t, "tail-json", 1)
	entries := []types.PutRecordsRequestEntry{
		{Data: []byte(`{"event_id":"ev_1", "event_type":"http_request_complete.v0",` + "\n" + `"object":{"conn":{"server_port":443}}}`), PartitionKey: aws.String("1")},
		{Data: []byte("not json"), PartitionKey: aws.String("2")},
		{Data: []byte(`{"event_id":"ev_3","event_type":"tcp_connection_closed.v0","object":{}}` + "\n"), PartitionKey: aws.String("3")},
	}
	if _, err := kl.Client().PutRecords(t.Context(), &kinesis.PutRecordsInput{StreamName: aws.String("tail-json"), Records: entries}); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := e.run("tail", streamARN, "--since", "1h", "--follow=false", "--json")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("tail --json printed %d lines, want the 2 events:\n%s", len(lines), out)
	}
	for i, want := range []string{"ev_1", "ev_3"} {
		var ev struct {
			ID string `json:"event_id"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &ev); err != nil || ev.ID != want {
			t.Fatalf("line %d %q: %v, want the JSON of %s", i, lines[i], err, want)
		}
	}
	if !strings.Contains(errOut, "not JSON") {
		t.Fatalf("tail --json said %q on standard error, want a word on the record it left out", errOut)
	}
	if _, _, err := e.run("tail", streamARN, "--json", "--pretty"); err == nil || !strings.Contains(err.Error(), "one or the other") {
		t.Fatalf("tail --json --pretty: %v, want a refusal", err)
	}
}

// TestTailFilterKinds: a filter is checked against the kind of each event;
// an event of a kind it does not fit stops the tail with the error, unless
// --type leaves that kind out.
func TestTailFilterKinds(t *testing.T) {
	e := newCLIEnv(t)
	kl := kinesalitetest.Start(t)
	for _, kv := range kl.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	streamARN := kl.CreateStream(t, "tail-kinds", 1)
	entries := []types.PutRecordsRequestEntry{
		{Data: []byte(`{"event_id":"ev_1","event_type":"http_request_complete.v0","object":{"conn":{"server_port":443}}}`), PartitionKey: aws.String("1")},
		{Data: []byte(`{"event_id":"ev_2","event_type":"api_key_created.v0","principal":{"source":"api"},"object":{"id":"ak_1"}}`), PartitionKey: aws.String("2")},
	}
	if _, err := kl.Client().PutRecords(t.Context(), &kinesis.PutRecordsInput{StreamName: aws.String("tail-kinds"), Records: entries}); err != nil {
		t.Fatal(err)
	}
	const filter = `ev.conn.server_port == 443` // fits the traffic kinds with conn, not an audit kind
	out, _, err := e.run("tail", streamARN, "--since", "1h", "--follow=false", "--filter", filter)
	if err == nil || !strings.Contains(err.Error(), "does not fit events of api_key_created.v0") || !strings.Contains(err.Error(), "--type") {
		t.Fatalf("tail --filter %s over an api_key_created.v0 event: %v, want an error naming the kind and --type", filter, err)
	}
	if !strings.Contains(out, "ev_1") {
		t.Fatalf("tail printed %q before the error, want ev_1", out)
	}
	out = e.must("tail", streamARN, "--since", "1h", "--follow=false", "--filter", filter, "--type", "http_request_complete.v0")
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "ev_1") {
		t.Fatalf("tail --type http_request_complete.v0 printed %q, want ev_1 alone", out)
	}
	// A destination's subscriptions tell its kinds: the filter is refused
	// at once, before anything is read.
	dest := e.mustJSON("destinations", "create", "--kinesis-stream-arn", streamARN,
		"--aws-access-key-id", kinesalitetest.AccessKeyID, "--aws-secret-access-key", kinesalitetest.SecretAccessKey)
	sub := e.mustJSON("subscriptions", "create", "--source", "http_request_complete.v0", "--source", "api_key_created.v0",
		"--destination-id", dest["id"].(string))
	out, _, err = e.run("tail", dest["id"].(string), "--since", "1h", "--follow=false", "--filter", filter)
	if want := "does not fit events of api_key_created.v0, which subscription " + sub["id"].(string); err == nil || !strings.Contains(err.Error(), want) || out != "" {
		t.Fatalf("tail %s --filter %s: %v, printing %q; want nothing printed and an error saying %q", dest["id"], filter, err, out, want)
	}
	out = e.must("tail", dest["id"].(string), "--since", "1h", "--follow=false", "--filter", filter, "--type", "http_request_complete.v0")
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "ev_1") {
		t.Fatalf("tail %s --type http_request_complete.v0 printed %q, want ev_1 alone", dest["id"], out)
	}
	// A filter reading a field a subscription's field selection leaves
	// out reads it as 0 in the events sent since: tail says so.
	dest2 := e.mustJSON("destinations", "create", "--kinesis-stream-arn", streamARN,
		"--aws-access-key-id", kinesalitetest.AccessKeyID, "--aws-secret-access-key", kinesalitetest.SecretAccessKey)
	sub2 := e.mustJSON("subscriptions", "create", "--data",
		`{"sources": [{"type": "http_request_complete.v0", "fields": ["conn.client_ip"]}], "destination_ids": ["`+dest2["id"].(string)+`"]}`)
	out, errOut, err := e.run("tail", dest2["id"].(string), "--since", "1h", "--follow=false", "--filter", filter, "--type", "http_request_complete.v0")
	if want := "warning: --filter reads ev.conn.server_port, which subscription " + sub2["id"].(string) + " leaves out"; err != nil || !strings.Contains(errOut, want) || !strings.Contains(out, "ev_1") {
		t.Fatalf("tail %s --filter %s: %v, printing %q and on standard error %q; want ev_1 and a warning saying %q", dest2["id"], filter, err, out, errOut, want)
	}
	out = e.must("tail", streamARN, "--since", "1h", "--follow=false", "--type", "api_key_created.v0")
	if out != "- api_key_created.v0 ev_2 {\"id\":\"ak_1\"} principal={\"source\":\"api\"}\n" {
		t.Fatalf("tail --type api_key_created.v0 printed %q, want ev_2 alone", out)
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
		// Refused at once, not by printing nothing.
		{[]string{"tail", "arn:aws:kinesis:us-east-1:123456789012:stream/s", "--filter", `ev.conn.server_port == "443"`}, "--filter fits no event kind; as a filter of http_request_complete.v0"},
		{[]string{"tail", "arn:aws:kinesis:us-east-1:123456789012:stream/s", "--filter", `ev.object.conn.server_port == 443`}, "write it as a subscription's filter"},
		{[]string{"tail", "arn:aws:kinesis:us-east-1:123456789012:stream/s", "--filter", `ev.event_type == "x"`}, "envelope.event_type"},
		{[]string{"tail", "arn:aws:kinesis:us-east-1:123456789012:stream/s", "--type", "http_request_complete.v0", "--filter", `ev.started_at > now`}, "does not fit events of --type http_request_complete.v0"},
		{[]string{"tail", "arn:aws:kinesis:us-east-1:123456789012:stream/s", "--type", "nope.v0"}, `--type "nope.v0" is not an event kind`},
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

// TestTailNoCredentials: without AWS credentials, tail says what to do.
func TestTailNoCredentials(t *testing.T) {
	clearSluiceEnv(t)
	for _, name := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ENDPOINT_URL"} {
		t.Setenv(name, "")
	}
	dir := t.TempDir()
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", dir+"/credentials")
	t.Setenv("AWS_CONFIG_FILE", dir+"/config")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	_, _, err := runSluice(t, "", "tail", "arn:aws:kinesis:us-east-1:123456789012:stream/edge", "--follow=false")
	for _, want := range []string{"no AWS credentials found", "AWS_PROFILE", "AWS_ACCESS_KEY_ID", "--emulator URL", "sluice serve --dev"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("tail without AWS credentials: %v, want an error saying %q", err, want)
		}
	}
}
