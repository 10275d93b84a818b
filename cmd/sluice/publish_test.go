package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/schemas"
)

// publishEnv is sluice's API on a real in-process NATS server.
type publishEnv struct {
	url    string
	token  string
	stream jetstream.Stream
}

func newPublishEnv(t *testing.T) *publishEnv {
	t.Helper()
	st := apitest.Start(t)
	return &publishEnv{url: st.URL, token: st.Token, stream: st.Stream}
}

// storedIDs reads the stream and returns the id of every event in it.
func (e *publishEnv) storedIDs(t *testing.T) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	info, err := e.stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	if info.State.Msgs == 0 {
		return ids
	}
	cons, err := e.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for read := uint64(0); read < info.State.Msgs; {
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d events before the deadline", read, info.State.Msgs)
		}
		batch, err := cons.FetchNoWait(1000)
		if err != nil {
			t.Fatal(err)
		}
		for msg := range batch.Messages() {
			read++
			// The message id is the account id, a colon and the event id.
			_, id, _ := strings.Cut(msg.Headers().Get(jetstream.MsgIDHeader), ":")
			ids[id] = true
		}
		if err := batch.Error(); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

// runPublishCommand runs `sluice publish` with the arguments and standard
// input, and returns its standard output and error and its error.
func runPublishCommand(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	return runPublishCommandContext(ctx, t, strings.NewReader(stdin), args...)
}

// runPublishCommandContext runs `sluice publish` until it ends or ctx does.
func runPublishCommandContext(ctx context.Context, t *testing.T, stdin io.Reader, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := newPublishCommand()
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	var out, errOut bytes.Buffer
	cmd.SetIn(stdin)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err = cmd.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// TestPublishSamples sends generated events to a real sluice and counts
// them in the stream. Samples carry no account_id: sluice would refuse
// the sampler's own account.
func TestPublishSamples(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		want       int
		minElapsed time.Duration // the pacing of --rate
	}{
		{name: "mixed", args: []string{"--sample", "mixed", "--count", "2000", "--batch", "300"}, want: 2000},
		{name: "traffic one at a time", args: []string{"--sample", "traffic", "--count", "50", "--batch", "7", "--concurrency", "1"}, want: 50},
		{name: "one kind", args: []string{"--sample", "ip_policy_created.v0", "--count", "20", "--seed", "3"}, want: 20},
		{name: "paced", args: []string{"--sample", "audit", "--count", "30", "--rate", "200", "--batch", "10", "--progress"}, want: 30, minElapsed: 29 * time.Second / 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newPublishEnv(t)
			start := time.Now()
			stdout, stderr, err := runPublishCommand(t, "", append([]string{"--api-url", env.url, "--api-key", env.token}, tt.args...)...)
			elapsed := time.Since(start)
			if err != nil {
				t.Fatalf("publish: %v\n%s", err, stderr)
			}
			if got := len(env.storedIDs(t)); got != tt.want {
				t.Fatalf("the stream holds %d events, want %d", got, tt.want)
			}
			if want := fmt.Sprintf("sent %d events in ", tt.want); !strings.HasPrefix(stdout, want) || !strings.Contains(stdout, fmt.Sprintf(": %d stored, 0 duplicates, 0 rejected", tt.want)) {
				t.Errorf("summary %q, want %q... %d stored", stdout, want, tt.want)
			}
			if elapsed < tt.minElapsed {
				t.Errorf("sent %d events in %s; at the rate asked that takes at least %s", tt.want, elapsed, tt.minElapsed)
			}
		})
	}
}

// TestPublishSameSeedIsDuplicate sends the samples of one seed twice: they
// have the same ids, so the second time every event is a duplicate.
func TestPublishSameSeedIsDuplicate(t *testing.T) {
	env := newPublishEnv(t)
	args := []string{"--api-url", env.url, "--api-key", env.token, "--sample", "mixed", "--count", "100", "--seed", "42", "--batch", "30"}
	for i, want := range []string{"100 stored, 0 duplicates", "0 stored, 100 duplicates"} {
		stdout, stderr, err := runPublishCommand(t, "", args...)
		if err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, stderr)
		}
		if !strings.Contains(stdout, want) {
			t.Errorf("run %d: summary %q, want %q", i, stdout, want)
		}
	}
	if got := len(env.storedIDs(t)); got != 100 {
		t.Fatalf("the stream holds %d events, want 100", got)
	}
}

// Lines of NDJSON input.
const (
	validLine     = `{"event_type":"http_request_complete.v0","object":{"conn":{"client_ip":"192.0.2.1"},"http":{"response":{"status_code":200}}}}`
	invalidLine   = `{"event_type":"http_request_complete.v0","object":{"http":{"response":{"status_code":"ok"}}}}`
	givenIDFormat = `{"event_id":%q,"event_type":"tcp_connection_closed.v0","object":{"conn":{"client_ip":"192.0.2.2"}}}`
	nullIDLine    = `{"event_id":null,"event_type":"tcp_connection_closed.v0","object":{}}`
)

// TestPublishNDJSON sends events read from a file or standard input to a
// real sluice.
func TestPublishNDJSON(t *testing.T) {
	givenID := schemas.NewID(schemas.PrefixEvent)
	given := fmt.Sprintf(givenIDFormat, givenID)
	tests := []struct {
		name      string
		file      string // written to a file given as the argument, unless stdin is set
		stdin     bool
		args      []string
		key       string // the API key; default the environment's
		wantErr   []string
		wantIDs   int
		wantGiven bool // the event with givenID is stored under its id
	}{
		{
			name:      "file",
			file:      validLine + "\n\n" + given + "\n" + nullIDLine, // a blank line, no final newline
			args:      []string{"--batch", "2"},
			wantIDs:   3,
			wantGiven: true,
		},
		{
			name:      "stdin",
			file:      given + "\n" + validLine + "\n",
			stdin:     true,
			wantIDs:   2,
			wantGiven: true,
		},
		{
			name:    "an invalid event",
			file:    validLine + "\n\n" + invalidLine + "\n" + given + "\n",
			wantErr: []string{"ERR_SLUICE_301 (HTTP 400): 1 of 3 events are invalid", "line 3 of ", "status_code"},
		},
		{
			name:    "a line that is not JSON",
			file:    "not an event\n" + validLine + "\n",
			stdin:   true,
			wantErr: []string{"ERR_SLUICE_301", "line 1 of standard input"},
		},
		{
			name:    "an unknown API key",
			file:    validLine + "\n",
			stdin:   true,
			key:     "not-a-key",
			wantErr: []string{"ERR_SLUICE_211 (HTTP 401)", "the API key is unknown"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newPublishEnv(t)
			key := env.token
			if tt.key != "" {
				key = tt.key
			}
			args := append([]string{"--api-url", env.url, "--api-key", key}, tt.args...)
			stdin := ""
			if tt.stdin {
				stdin = tt.file
				args = append(args, "-")
			} else {
				path := filepath.Join(t.TempDir(), "events.ndjson")
				if err := os.WriteFile(path, []byte(tt.file), 0o600); err != nil {
					t.Fatal(err)
				}
				args = append(args, path)
			}
			_, stderr, err := runPublishCommand(t, stdin, args...)
			ids := env.storedIDs(t)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("no error; stderr:\n%s", stderr)
				}
				for _, want := range tt.wantErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
				if len(ids) != 0 {
					t.Errorf("the stream holds %d events of a batch with an invalid event", len(ids))
				}
				return
			}
			if err != nil {
				t.Fatalf("publish: %v\n%s", err, stderr)
			}
			if len(ids) != tt.wantIDs {
				t.Errorf("the stream holds %d events, want %d", len(ids), tt.wantIDs)
			}
			if tt.wantGiven && !ids[givenID] {
				t.Errorf("the event with event_id %s is not stored under it", givenID)
			}
		})
	}
}

// TestSampleMixesLeaveOutSluiceKinds checks that the mixes of --sample
// never pick a kind sluice emits about its own resources, which ingest
// refuses, and still pick every other kind.
func TestSampleMixesLeaveOutSluiceKinds(t *testing.T) {
	c := schemas.Default()
	for _, sample := range []string{"mixed", "traffic", "audit"} {
		m, err := newKindMix(c, sample, 1)
		if err != nil {
			t.Fatal(err)
		}
		picked := map[string]bool{}
		for range 20_000 {
			picked[m.next()] = true
		}
		for _, k := range c.Kinds() {
			wanted := !k.EmittedBySluice && (sample == "mixed" || sample == k.Class.String())
			if picked[k.Name] != wanted {
				t.Errorf("--sample %s: picked %s %t, want %t", sample, k.Name, picked[k.Name], wanted)
			}
		}
	}
}

// TestPublishFlags checks that bad flags are refused before anything is sent.
func TestPublishFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no key", []string{"--sample", "mixed"}, "--api-key is required"},
		{"batch too large", []string{"--api-key", "k", "--batch", "10001"}, "--batch 10001"},
		{"no concurrency", []string{"--api-key", "k", "--concurrency", "0"}, "--concurrency 0"},
		{"bad URL", []string{"--api-key", "k", "--api-url", "localhost:8080"}, "--api-url"},
		{"file and sample", []string{"--api-key", "k", "--sample", "mixed", "events.ndjson"}, "not both"},
		{"unknown kind", []string{"--api-key", "k", "--sample", "no_such_kind.v0"}, "unknown event kind"},
		{"kind only sluice emits", []string{"--api-key", "k", "--sample", "event_destination_deleted.v0"}, "emitted by sluice itself"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runPublishCommand(t, "", tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// fakeIngest answers POST /events with the statuses given, in turn, and
// keeps every request body.
type fakeIngest struct {
	t        *testing.T
	statuses []int
	received chan int // if set, gets the number of events of each request

	mu     sync.Mutex
	bodies [][]byte
}

func (f *fakeIngest) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		f.t.Errorf("reading the request: %v", err)
	}
	for header, want := range map[string]string{"Content-Type": "application/x-ndjson", "Service-Version": "2", "Authorization": "Bearer token"} {
		if got := r.Header.Get(header); got != want {
			f.t.Errorf("request header %s: %q, want %q", header, got, want)
		}
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	status := f.statuses[min(len(f.bodies), len(f.statuses))-1]
	f.mu.Unlock()

	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	switch status {
	case http.StatusAccepted:
		ids := eventIDs(f.t, body)
		_ = json.NewEncoder(w).Encode(ingestReply{EventIDs: ids, Stored: len(ids)})
		if f.received != nil {
			f.received <- len(ids)
		}
	case http.StatusServiceUnavailable:
		_, _ = io.WriteString(w, `{"error_code":"ERR_SLUICE_101","status_code":503,"msg":"JetStream did not store 3 of 3 events","details":{"operation_id":"op_x"}}`)
	case http.StatusBadRequest:
		_, _ = io.WriteString(w, `{"error_code":"ERR_SLUICE_301","status_code":400,"msg":"1 of 3 events are invalid","details":{"operation_id":"op_x","errors":"[{\"index\":2,\"error\":\"object: missing\"}]"}}`)
	default:
		_, _ = io.WriteString(w, "<html>proxy error</html>")
	}
}

// requests returns the bodies received so far.
func (f *fakeIngest) requests() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies
}

// eventIDs returns the event_id of each line of an NDJSON body.
func eventIDs(t *testing.T, body []byte) []string {
	t.Helper()
	var ids []string
	for line := range bytes.Lines(body) {
		var ev struct {
			ID string `json:"event_id"`
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Errorf("line %q: %v", line, err)
		}
		ids = append(ids, ev.ID)
	}
	return ids
}

// TestPublishRetries sends a batch to a fake API: it is sent again, with
// the same event ids, while the API is unavailable, and not after a 4xx.
func TestPublishRetries(t *testing.T) {
	givenID := schemas.NewID(schemas.PrefixEvent)
	input := validLine + "\n" + fmt.Sprintf(givenIDFormat, givenID) + "\n" + nullIDLine + "\n"
	tests := []struct {
		name        string
		statuses    []int
		wantErr     string
		wantRetries string // in the summary
	}{
		{name: "503 twice", statuses: []int{503, 503, 202}, wantRetries: "2 retries"},
		{name: "a proxy's 502", statuses: []int{502, 202}, wantRetries: "1 retry"},
		{name: "400", statuses: []int{400}, wantErr: "ERR_SLUICE_301 (HTTP 400): 1 of 3 events are invalid\n  line 3 of standard input: object: missing"},
		{name: "500", statuses: []int{500}, wantErr: "HTTP 500: <html>proxy error</html>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeIngest{t: t, statuses: tt.statuses}
			hs := httptest.NewServer(fake)
			t.Cleanup(hs.Close)
			stdout, stderr, err := runPublishCommand(t, input, "--api-url", hs.URL, "--api-key", "token", "--concurrency", "1")
			bodies := fake.requests()
			if len(bodies) != len(tt.statuses) {
				t.Fatalf("%d requests, want %d; stderr:\n%s", len(bodies), len(tt.statuses), stderr)
			}
			ids := eventIDs(t, bodies[0])
			if len(ids) != 3 || ids[1] != givenID {
				t.Fatalf("event ids %q: want 3, the second %s", ids, givenID)
			}
			for _, id := range ids {
				if err := schemas.CheckID(schemas.PrefixEvent, id); err != nil {
					t.Errorf("event id: %v", err)
				}
			}
			for i, body := range bodies[1:] {
				if !bytes.Equal(body, bodies[0]) {
					t.Errorf("retry %d sent\n%s\nthe first request sent\n%s", i+1, body, bodies[0])
				}
			}
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("publish: %v\n%s", err, stderr)
			}
			if retries := len(tt.statuses) - 1; strings.Count(stderr, "retrying a batch") != retries || !strings.Contains(stdout, "3 stored, 0 duplicates, 0 rejected, "+tt.wantRetries) {
				t.Errorf("after %d retries: stdout %q, stderr %q", retries, stdout, stderr)
			}
		})
	}
}

// TestPublishSlowInput pipes events in slowly: those read go out while the
// command waits for more, and cancelling it ends it though standard input
// is still open.
func TestPublishSlowInput(t *testing.T) {
	fake := &fakeIngest{t: t, statuses: []int{202}, received: make(chan int, 10)}
	hs := httptest.NewServer(fake)
	t.Cleanup(hs.Close)
	stdin, input := io.Pipe()
	t.Cleanup(func() { _ = input.Close() })
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	type outcome struct {
		stdout string
		err    error
	}
	done := make(chan outcome, 1)
	go func() {
		stdout, _, err := runPublishCommandContext(ctx, t, stdin, "--api-url", hs.URL, "--api-key", "token")
		done <- outcome{stdout, err}
	}()

	if _, err := io.WriteString(input, validLine+"\n"+nullIDLine+"\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-fake.received:
		if n != 2 {
			t.Fatalf("the first request held %d events, want the 2 written", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the events written were not sent while standard input stayed open")
	}
	cancel()
	select {
	case got := <-done:
		if !errors.Is(got.err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", got.err)
		}
		if !strings.Contains(got.stdout, "sent 2 events") {
			t.Errorf("summary %q, want 2 events sent", got.stdout)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the command did not end when cancelled while reading standard input")
	}
}

// pacerStep asks a pacer whether event n is ready at a time after its start.
type pacerStep struct {
	n    int
	at   time.Duration
	want bool
}

// TestPacer checks when a pacer lets events through, and that after falling
// behind it sends at most a second's worth at once.
func TestPacer(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	const ms, s = time.Millisecond, time.Second
	tests := []struct {
		name  string
		rate  float64
		steps []pacerStep
	}{
		{"no limit", 0, []pacerStep{{0, 0, true}, {1_000_000, 0, true}}},
		{"10 per second", 10, []pacerStep{{0, 0, true}, {1, 0, false}, {1, 99 * ms, false}, {1, 100 * ms, true}, {10, 999 * ms, false}, {10, s, true}}},
		{"behind", 10, []pacerStep{{5, 10 * s, true}, {15, 10 * s, true}, {16, 10 * s, false}, {16, 10*s + 100*ms, true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPacer(tt.rate, t0)
			for _, step := range tt.steps {
				if got := p.ready(step.n, t0.Add(step.at)); got != step.want {
					t.Errorf("event %d at %s: ready %t, want %t", step.n, step.at, got, step.want)
				}
			}
		})
	}
}

// TestWithEventID checks that lines without an event_id get one and that
// the rest is kept as it was.
func TestWithEventID(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		wantNew bool // a new id is added; otherwise the line is unchanged
	}{
		{"has an id", fmt.Sprintf(givenIDFormat, schemas.NewID(schemas.PrefixEvent)), false},
		{"invalid id kept for the API to refuse", `{"event_id":"nope","event_type":"x"}`, false},
		{"no id", `{"event_type":"x","object":{"html":"<b>&amp;</b>","n":1.50}}`, true},
		{"null id", nullIDLine, true},
		{"not an object", `[1,2]`, false},
		{"null", `null`, false},
		{"not JSON", `{"event_type":`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := withEventID([]byte(tt.line))
			if !tt.wantNew {
				if string(got) != tt.line {
					t.Fatalf("line changed to %s", got)
				}
				return
			}
			var gotFields, wantFields map[string]json.RawMessage
			if err := json.Unmarshal(got, &gotFields); err != nil {
				t.Fatalf("%s: %v", got, err)
			}
			if err := json.Unmarshal([]byte(tt.line), &wantFields); err != nil {
				t.Fatal(err)
			}
			var id string
			if err := json.Unmarshal(gotFields["event_id"], &id); err != nil || schemas.CheckID(schemas.PrefixEvent, id) != nil {
				t.Fatalf("event_id %s is not a new id", gotFields["event_id"])
			}
			delete(gotFields, "event_id")
			delete(wantFields, "event_id")
			for k, v := range wantFields {
				if !bytes.Equal(gotFields[k], v) {
					t.Errorf("field %s: %s, want %s", k, gotFields[k], v)
				}
			}
			if len(gotFields) != len(wantFields) {
				t.Errorf("fields %v, want %v", gotFields, wantFields)
			}
		})
	}
}

// paddedLine returns an event line of exactly size bytes, with the given
// event_id ("" for none), padded with an unknown field of fill bytes.
func paddedLine(t *testing.T, size int, id string, fill byte) string {
	t.Helper()
	head := `{"event_type":"http_request_complete.v0","object":{"padding":"`
	if id != "" {
		head = `{"event_id":"` + id + `",` + head[1:]
	}
	const tail = `"}}`
	n := size - len(head) - len(tail)
	if n < 0 {
		t.Fatalf("a line of %d bytes cannot hold an event", size)
	}
	return head + strings.Repeat(string(fill), n) + tail
}

// TestPublishBatchesByBytes sends big events to a fake API that counts the
// bytes of each request: no body passes the API's limit of 10 MiB, though
// the batches hold far fewer events than --batch, and every line is sent
// once, in order.
func TestPublishBatchesByBytes(t *testing.T) {
	const lines, size = 18, 700 << 10
	var input strings.Builder
	for range lines {
		input.WriteString(paddedLine(t, size, schemas.NewID(schemas.PrefixEvent), 'x') + "\n")
	}
	fake := &fakeIngest{t: t, statuses: []int{202}}
	hs := httptest.NewServer(fake)
	t.Cleanup(hs.Close)
	path := filepath.Join(t.TempDir(), "big.ndjson")
	if err := os.WriteFile(path, []byte(input.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runPublishCommand(t, "", "--api-url", hs.URL, "--api-key", "token", "--concurrency", "1", path)
	if err != nil {
		t.Fatalf("publish: %v\n%s", err, stderr)
	}
	bodies := fake.requests()
	var sent bytes.Buffer
	for i, body := range bodies {
		if len(body) > publishMaxBodyBytes {
			t.Errorf("request %d is %d bytes, over the limit of %d (the API takes 10 MiB)", i, len(body), publishMaxBodyBytes)
		}
		sent.Write(body)
	}
	// Slow input may send a batch before it is full, so only the least
	// count is known.
	if least := (lines*(size+1) + publishMaxBodyBytes - 1) / publishMaxBodyBytes; len(bodies) < least {
		t.Errorf("%d requests, want at least %d (%d bytes in bodies of at most %d)", len(bodies), least, lines*(size+1), publishMaxBodyBytes)
	}
	if sent.String() != input.String() {
		t.Errorf("the requests together differ from the input (%d bytes sent, %d read)", sent.Len(), input.Len())
	}
}

// TestBatcherBytes checks where the batcher splits events by bytes: before
// the body would pass maxBytes, counting each event's newline.
func TestBatcherBytes(t *testing.T) {
	tests := []struct {
		name     string
		lines    []int // bytes of each event
		size     int   // events per batch
		maxBytes int
		want     []int // events of each batch
	}{
		{name: "all fit", lines: []int{10, 10, 10}, size: 10, maxBytes: 33, want: []int{3}},
		{name: "one byte over", lines: []int{10, 10, 10}, size: 10, maxBytes: 32, want: []int{2, 1}},
		{name: "count first", lines: []int{1, 1, 1, 1, 1}, size: 2, maxBytes: 100, want: []int{2, 2, 1}},
		{name: "an event over the limit goes alone", lines: []int{5, 50, 5}, size: 10, maxBytes: 20, want: []int{1, 1, 1}},
		{name: "mixed sizes", lines: []int{9, 9, 19, 9, 9}, size: 10, maxBytes: 20, want: []int{2, 1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events := make(chan sourceEvent, len(tt.lines)+1)
			for i, n := range tt.lines {
				events <- sourceEvent{line: bytes.Repeat([]byte("e"), n), origin: i + 1}
			}
			events <- sourceEvent{err: io.EOF}
			out := make(chan publishBatch, len(tt.lines))
			b := &batcher{events: events, out: out, size: tt.size, maxBytes: tt.maxBytes, linger: time.Hour, pace: newPacer(0, time.Now())}
			if err := b.run(t.Context()); err != nil {
				t.Fatalf("run: %v", err)
			}
			close(out)
			var got []int
			for batch := range out {
				got = append(got, len(batch.origins))
				if len(batch.origins) > 1 && len(batch.body) > tt.maxBytes {
					t.Errorf("a batch of %d events is %d bytes, over %d", len(batch.origins), len(batch.body), tt.maxBytes)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("batches of %v events, want %v", got, tt.want)
			}
		})
	}
}

// TestPublishLineTooLong checks that a line over the API's limit per event
// stops the command with a message naming it, and that nothing of it is
// sent; a line just at the limit goes out.
func TestPublishLineTooLong(t *testing.T) {
	id := schemas.NewID(schemas.PrefixEvent)
	const limit = schemas.DefaultMaxEventBytes
	tests := []struct {
		name    string
		line    string // the second line of the input
		stdin   bool
		wantErr string // "" if the line is sent
	}{
		{name: "at the limit", line: paddedLine(t, limit, id, 'y')},
		{name: "one byte over", line: paddedLine(t, limit+1, id, 'y'), wantErr: "line 2 of "},
		{name: "at the limit until publish adds an event_id", line: paddedLine(t, limit, "", 'y'), wantErr: "line 2 of "},
		{name: "far over, from standard input", line: paddedLine(t, 5*limit, id, 'y'), stdin: true, wantErr: "line 2 of standard input"},
		{name: "over the limit with spaces around", line: "   " + paddedLine(t, limit+1, id, 'y') + "   ", wantErr: "line 2 of "},
		{name: "at the limit with spaces around", line: strings.Repeat(" ", 100<<10) + paddedLine(t, limit, id, 'y') + "\t", stdin: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeIngest{t: t, statuses: []int{202}}
			hs := httptest.NewServer(fake)
			t.Cleanup(hs.Close)
			input := validLine + "\n" + tt.line + "\n" + validLine + "\n"
			args := []string{"--api-url", hs.URL, "--api-key", "token", "--batch", "1", "--concurrency", "1"}
			stdin := ""
			if tt.stdin {
				stdin = input
			} else {
				path := filepath.Join(t.TempDir(), "events.ndjson")
				if err := os.WriteFile(path, []byte(input), 0o600); err != nil {
					t.Fatal(err)
				}
				args = append(args, path)
			}
			_, stderr, err := runPublishCommand(t, stdin, args...)
			sentBig := false
			for _, body := range fake.requests() {
				sentBig = sentBig || bytes.Contains(body, []byte("yyyy"))
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("publish: %v\n%s", err, stderr)
				}
				if !sentBig || len(fake.requests()) != 3 {
					t.Errorf("%d requests, the line at the limit sent: %t; want 3 with it", len(fake.requests()), sentBig)
				}
				return
			}
			for _, want := range []string{tt.wantErr, fmt.Sprint(limit), "nothing of it was sent"} {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error %v, want one saying %q", err, want)
				}
			}
			var tooLong *lineTooLongError
			if !errors.As(err, &tooLong) {
				t.Errorf("error %T, want a *lineTooLongError", err)
			}
			if sentBig {
				t.Error("part of the line over the limit was sent")
			}
		})
	}
}

// TestIngestRetryBudget checks that a batch is given up in time while the
// API keeps answering 503 or does not answer at all, and that the budget
// stays under the stream's duplicate window.
func TestIngestRetryBudget(t *testing.T) {
	if ingestRetryFor > pipeline.DuplicateWindow*3/4 || ingestRequestTimeout >= ingestRetryFor {
		t.Fatalf("a batch may take %s, requests %s: want well under the duplicate window %s", ingestRetryFor, ingestRequestTimeout, pipeline.DuplicateWindow)
	}
	// hang reads the request, so that the server notices when the client
	// gives up, and never answers.
	hang := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	})
	tests := []struct {
		name    string
		handler http.Handler
		want    []string
	}{
		{name: "always 503", handler: &fakeIngest{t: t, statuses: []int{503}}, want: []string{"of the 1.5s a batch may take", "ERR_SLUICE_101 (HTTP 503)"}},
		{name: "no reply", handler: hang, want: []string{"of the 1.5s a batch may take", "no reply in time"}},
		{name: "Retry-After past the budget", handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "20")
			w.WriteHeader(http.StatusTooManyRequests)
		}), want: []string{"of the 1.5s a batch may take", "HTTP 429"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := httptest.NewServer(tt.handler)
			t.Cleanup(hs.Close)
			client := newIngestClient(hs.URL, "token", 1)
			client.retryFor, client.minAttempt = 1500*time.Millisecond, 100*time.Millisecond
			start := time.Now()
			_, err := client.send(t.Context(), []byte(validLine+"\n"))
			if elapsed := time.Since(start); elapsed > client.retryFor+time.Second {
				t.Errorf("send took %s, want at most the %s budget", elapsed, client.retryFor)
			}
			elapsed := time.Since(start)
			for _, want := range tt.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("error %v, want one saying %q", err, want)
				}
			}
			checkStatedDuration(t, err.Error(), `giving up on a batch after (\S+) of`, elapsed)
			hs.CloseClientConnections()
		})
	}
}
