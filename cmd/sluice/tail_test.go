package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
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
	clearAWSEnv(t)
	_, _, err := runSluice(t, "", "tail", "arn:aws:kinesis:us-east-1:123456789012:stream/edge", "--follow=false")
	for _, want := range []string{"no AWS credentials found", "AWS_PROFILE", "AWS_ACCESS_KEY_ID", "--emulator URL", "sluice serve --dev"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("tail without AWS credentials: %v, want an error saying %q", err, want)
		}
	}
}

// clearAWSEnv leaves the test without AWS credentials or endpoints, and
// without waiting on an instance role.
func clearAWSEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "AWS_") {
			t.Setenv(name, "")
		}
	}
	dir := t.TempDir()
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", dir+"/credentials")
	t.Setenv("AWS_CONFIG_FILE", dir+"/config")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// TestTailMissingTarget: a following tail waits for a stream that does not
// exist yet only when it reads an emulator it was told of (--emulator, or
// a serve --dev's); elsewhere, as against AWS, the stream is a typo that
// nothing will create, and the error names it rather than tail waiting
// forever.
func TestTailMissingTarget(t *testing.T) {
	clearSluiceEnv(t)
	clearAWSEnv(t)
	emu := emulatortest.Start(t, emulator.Config{})
	const arn = "arn:aws:kinesis:us-east-1:123456789012:stream/typo"

	// Told of the emulator: it waits, saying so, until interrupted.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errOut := &syncBuffer{}
	cmd := newRootCommand()
	cmd.SetArgs([]string{"tail", arn, "--emulator", emu.Endpoint})
	cmd.SetOut(io.Discard)
	cmd.SetErr(errOut)
	errRun := make(chan error, 1)
	go func() { errRun <- cmd.ExecuteContext(ctx) }()
	check.Eventually(t, 10*time.Second, "tail --emulator of a stream that does not exist yet to say it waits", func() (string, bool) {
		select {
		case err := <-errRun:
			t.Fatalf("tail --emulator of a stream that does not exist yet: %v, want it to wait", err)
		default:
		}
		said := errOut.String()
		return said, strings.Contains(said, "Kinesis stream typo does not exist yet; waiting")
	})
	cancel()
	if err := <-errRun; err != nil {
		t.Fatalf("tail --emulator, interrupted while waiting: %v", err)
	}

	// Reached through the SDK's endpoint variables, as AWS is: an error.
	for _, kv := range emu.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cmd = newRootCommand()
	cmd.SetArgs([]string{"tail", arn})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.ExecuteContext(ctx)
	if err == nil || !strings.Contains(err.Error(), "typo") || !strings.Contains(err.Error(), "ResourceNotFoundException") {
		t.Fatalf("tail %s, which does not exist, against an endpoint not known to be an emulator: %v, want an error naming it", arn, err)
	}
}

// TestTailNothingDelivered: tail --follow=false of a destination of an
// emulator that has received nothing, whose stream, log group or delivery
// stream the emulator has not made yet, prints nothing and exits 0, as
// an empty stream; it does not wait, as --follow would.
func TestTailNothingDelivered(t *testing.T) {
	clearSluiceEnv(t)
	clearAWSEnv(t)
	emu := emulatortest.Start(t, emulator.Config{})
	for _, arn := range []string{
		"arn:aws:kinesis:us-east-1:123456789012:stream/none",
		"arn:aws:logs:us-east-1:123456789012:log-group:/none",
		"arn:aws:firehose:us-east-1:123456789012:deliverystream/none",
	} {
		t.Run(arn, func(t *testing.T) {
			out, errOut, err := runSluice(t, "", "tail", arn, "--emulator", emu.Endpoint, "--follow=false", "--since", "1h")
			if err != nil || out != "" || strings.Contains(errOut, "waiting") {
				t.Fatalf("tail --follow=false of %s, which has received nothing: %v, printed %q and %q on stderr; want nothing and exit 0", arn, err, out, errOut)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fakeDevServer is an API that answers as a serve --dev does, with the
// header telling its emulator, and counts the requests it gets.
func fakeDevServer(t *testing.T, ln net.Listener, emulatorURL string) (apiURL string, requests *atomic.Int32) {
	t.Helper()
	requests = &atomic.Int32{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set(headerDevAWSEndpoint, emulatorURL)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL, requests
}

// TestTailARNOfDevServer: with SLUICE_API_KEY set, an ARN is read from the
// emulator of a serve --dev only when the API is on this machine
// (loopback), and tail says on standard error where it reads; a remote
// API's header would send it to this machine's 127.0.0.1, which is not
// that server's emulator.
func TestTailARNOfDevServer(t *testing.T) {
	clearSluiceEnv(t)
	clearAWSEnv(t)
	emu := emulatortest.Start(t, emulator.Config{})
	kc := emu.KinesisClient()
	if _, err := kc.CreateStream(t.Context(), &kinesis.CreateStreamInput{StreamName: aws.String("dev"), ShardCount: aws.Int32(1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := kc.PutRecord(t.Context(), &kinesis.PutRecordInput{StreamName: aws.String("dev"), PartitionKey: aws.String("k"),
		Data: []byte(`{"event_id":"ev_1","event_type":"http_request_complete.v0","object":{}}`)}); err != nil {
		t.Fatal(err)
	}
	const arn = "arn:aws:kinesis:us-east-1:123456789012:stream/dev"

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	apiURL, _ := fakeDevServer(t, ln, emu.Endpoint)
	t.Setenv("SLUICE_API_KEY", "sk_test")
	out, errOut, err := runSluice(t, "", "tail", arn, "--since", "1h", "--follow=false", "--api-url", apiURL)
	if err != nil || !strings.Contains(out, "ev_1") {
		t.Fatalf("tail %s with the API of a serve --dev on loopback: %v, printing %q; want the emulator's event", arn, err, out)
	}
	if want := "reading the AWS emulator " + emu.Endpoint + " of the sluice serve --dev at " + apiURL; !strings.Contains(errOut, want) ||
		!strings.Contains(errOut, "--emulator") || !strings.Contains(errOut, "AWS_ENDPOINT_URL") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("tail %s read a serve --dev's emulator saying %q on standard error, want one line saying %q and how to read elsewhere", arn, errOut, want)
	}

	// A dev server elsewhere: not asked, and AWS is read.
	ip := nonLoopbackIP(t)
	ln, err = net.Listen("tcp", net.JoinHostPort(ip.String(), "0"))
	if err != nil {
		t.Skipf("listening on %s: %v", ip, err)
	}
	apiURL, requests := fakeDevServer(t, ln, emu.Endpoint)
	_, _, err = runSluice(t, "", "tail", arn, "--since", "1h", "--follow=false", "--api-url", apiURL)
	if err == nil || !strings.Contains(err.Error(), "no AWS credentials found") || requests.Load() != 0 {
		t.Fatalf("tail %s with the API of a serve --dev at %s: %v after %d requests to it; want AWS read (no credentials here), and the API not asked", arn, apiURL, err, requests.Load())
	}
}

// nonLoopbackIP is an address of this machine that is not loopback; it
// skips the test when there is none.
func nonLoopbackIP(t *testing.T) net.IP {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Skipf("this machine's addresses: %v", err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil && !n.IP.IsLinkLocalUnicast() {
			return n.IP
		}
	}
	t.Skip("this machine has no address but loopback")
	return nil
}

func TestTailLoopbackAPI(t *testing.T) {
	for u, want := range map[string]bool{
		"http://127.0.0.1:8080":      true,
		"http://127.3.2.1":           true,
		"https://[::1]:8443/":        true,
		"http://localhost:8080":      true,
		"http://LocalHost":           true,
		"http://10.0.0.7:8080":       false,
		"https://sluice.example.com": false,
		"http://0.0.0.0:8080":        false,
		"http://localhost.evil.com":  false,
		"not a url":                  false,
	} {
		if got := loopbackAPI(u); got != want {
			t.Errorf("loopbackAPI(%q) = %v, want %v", u, got, want)
		}
	}
}
