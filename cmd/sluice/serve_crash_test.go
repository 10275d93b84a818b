package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/kinesalitetest"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/schemas"
)

// The crash test's sizes.
const (
	crashToken = "sk_test_crash_bootstrap_token_0123456789"
	// crashEvents are published in all, in batches of crashBatch; the
	// publisher stops at crashPauseAt until sluice has been killed and
	// started again, so that there is a backlog to kill in the middle of
	// and events to publish to the new process.
	crashEvents  = 20_000
	crashBatch   = 500
	crashPauseAt = 3 * crashEvents / 4
	// The process is killed once at least crashKillAfter events are in
	// the stream and at least crashMinBacklog published ones are not.
	crashKillAfter  = 500
	crashMinBacklog = 1000
	// crashMaxDuplicates bounds the events delivered twice: the records
	// of the batch being written when the process died, and those of the
	// batches whose acks the killed NATS server had not written to disk
	// (it writes a consumer's state at most every 100 ms); with a margin,
	// all a worker can hold: its prefetch and two Kinesis batches.
	crashMaxDuplicates = pipeline.DefaultPrefetch + 2*500
)

// TestServeCrashLosesNothing kills `sluice serve` with SIGKILL while it
// delivers a backlog to Kinesis (kinesalite) and starts it again on the
// same data dir while events keep coming: every event the API accepted and
// the subscription selects reaches the stream, none it does not select
// does, and the duplicates are counted, reported and bounded. Most of its
// run time is the consumer's AckWait (30 s): the events the killed process
// held are delivered again only once it has passed.
func TestServeCrashLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary, runs kinesalite, kills and restarts sluice serve")
	}
	began := time.Now()
	bin := buildSluice(t)
	kl := kinesalitetest.Start(t)
	streamARN := kl.CreateStream(t, "sluice-crash", 2)
	dataDir := t.TempDir()

	stream := newStreamTail(t, kl, streamARN)
	relay := startKinesisRelay(t, kl.Endpoint)

	first := startCrashServe(t, bin, dataDir, kl, relay, "SLUICE_BOOTSTRAP_API_KEY="+crashToken)
	consumer := createCrashRoute(t, first.url, streamARN)
	first.waitLog(t, "route delivering")
	marker := waitMarkerDelivered(t, first.url, stream)

	events := newCrashEvents(crashEvents)
	server := newCurrentServer(first.url)
	pub := startPublisher(t, server, events, crashPauseAt)

	atKill := waitMidDelivery(t, stream, pub, events)
	first.kill(t)
	published := pub.acked()
	delivered := countSelected(stream.readAll(t), events[:published])
	t.Logf("killed sluice with %d events published (%d selected), %d of them delivered (%d seen just before the kill)",
		published, selectedIn(events[:published]), delivered, atKill)
	if delivered >= selectedIn(events[:published]) {
		t.Fatalf("delivery had caught up when sluice was killed: %d of %d delivered; the test needs a backlog", delivered, selectedIn(events[:published]))
	}

	second := startCrashServe(t, bin, dataDir, kl, relay)
	restarted := time.Now()
	server.set(second.url)
	pub.resume()
	if err := pub.wait(90 * time.Second); err != nil {
		t.Fatalf("publishing: %v\nfirst process:\n%s\nsecond process:\n%s", err, first.tail(), second.tail())
	}
	got := waitAllDelivered(t, stream, second, consumer, events, restarted)
	checkCrashDelivery(t, got, events, marker)
	t.Logf("requests to POST /events that failed (during the kill and restart) and were sent again: %d; run time %s", pub.resent(), time.Since(began).Round(100*time.Millisecond))
}

// crashServe is a `sluice serve` of the crash test, with its embedded NATS
// server listening on loopback so that the test can watch the route's
// consumer.
type crashServe struct {
	*serveProcess
	natsURL string
}

func startCrashServe(t *testing.T, bin, dataDir string, kl *kinesalitetest.Server, relay string, env ...string) *crashServe {
	t.Helper()
	natsAddr := freeLoopbackAddr(t)
	// The last value of a variable wins: Kinesis through the relay.
	env = append(append(kl.Env(), "AWS_ENDPOINT_URL_KINESIS="+relay, "SLUICE_NATS_LISTEN="+natsAddr), env...)
	return &crashServe{serveProcess: startServe(t, bin, dataDir, env...), natsURL: "nats://" + natsAddr}
}

// startKinesisRelay starts a relay to kinesalite at endpoint that reads
// each request whole before it forwards it, and finishes it whatever its
// client does meanwhile, and returns its URL. kinesalite dies (node throws
// ECONNRESET from the request's error handler) when a client drops a
// connection in the middle of a request, which is what a process killed
// with SIGKILL does: through the relay, kinesalite sees no such request.
func startKinesisRelay(t *testing.T, endpoint string) string {
	t.Helper()
	client := &http.Client{Timeout: time.Minute}
	relay := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return // the client went away: kinesalite never sees the request
		}
		// Not r's context: the request goes on when its client dies.
		req, err := http.NewRequestWithContext(context.Background(), r.Method, endpoint+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header = r.Header.Clone()
		req.Host = r.Host // as signed
		resp, err := client.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		maps.Copy(w.Header(), resp.Header)
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(func() {
		relay.Close()
		client.CloseIdleConnections()
	})
	return relay.URL
}

// freeLoopbackAddr returns a loopback address with a port free a moment
// ago: --nats-listen takes port 0, but serve does not say which port it got.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// kill sends SIGKILL and waits until the process is gone.
func (p *crashServe) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("sluice serve still running 10s after SIGKILL")
	}
}

// tail returns the last lines the process logged, for a failure message.
func (p *crashServe) tail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.later[max(0, len(p.later)-30):], "\n")
}

// createCrashRoute creates a Kinesis destination and a subscription of the
// HTTPS requests to it over the API, and returns the route's consumer name.
func createCrashRoute(t *testing.T, url, streamARN string) string {
	t.Helper()
	destination := fmt.Sprintf(`{"description":"crash test","target":{"kinesis":{"stream_arn":%q,"auth":{"creds":{"aws_access_key_id":%q,"aws_secret_access_key":%q}}}}}`,
		streamARN, kinesalitetest.AccessKeyID, kinesalitetest.SecretAccessKey)
	destID := createByAPI(t, url+"/event_destinations", destination)
	subscription := fmt.Sprintf(`{"description":"https requests","sources":[{"type":"http_request_complete.v0","filter":"ev.conn.server_port == 443"}],"destination_ids":[%q]}`, destID)
	subID := createByAPI(t, url+"/event_subscriptions", subscription)
	return pipeline.ConsumerName(subID, destID)
}

// createByAPI POSTs body and returns the id of the resource created.
func createByAPI(t *testing.T, url, body string) string {
	t.Helper()
	code, out := request(t, http.MethodPost, url, crashToken, body)
	var created struct {
		ID string `json:"id"`
	}
	if code != http.StatusCreated || json.Unmarshal([]byte(out), &created) != nil || created.ID == "" {
		t.Fatalf("POST %s: %d %s", url, code, out)
	}
	return created.ID
}

// waitMarkerDelivered publishes one selected event and waits until it is in
// the stream: delivery is live. It returns the event's id.
func waitMarkerDelivered(t *testing.T, url string, stream *streamTail) string {
	t.Helper()
	marker := newCrashEvents(1)[0]
	if err := postEventBatch(context.Background(), http.DefaultClient, url, []crashEvent{marker}); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, 20*time.Second, 20*time.Millisecond, "the marker event reaching the stream", func() bool {
		return stream.read(t)[marker.id] > 0
	})
	return marker.id
}

// waitMidDelivery waits until delivery is under way with a backlog: some
// published events in the stream, many not yet. It returns how many were
// delivered.
func waitMidDelivery(t *testing.T, stream *streamTail, pub *eventPublisher, events []crashEvent) int {
	t.Helper()
	var delivered, selected int
	pollUntil(t, 30*time.Second, 20*time.Millisecond, "delivery in the middle of a backlog", func() bool {
		if err := pub.failed(); err != nil {
			t.Fatalf("publishing: %v", err)
		}
		published := events[:pub.acked()]
		selected = selectedIn(published)
		delivered = countSelected(stream.read(t), published)
		return delivered >= crashKillAfter && selected-delivered >= crashMinBacklog
	}, func() string {
		return fmt.Sprintf("%d of %d published selected events delivered", delivered, selected)
	})
	return delivered
}

// waitAllDelivered waits until every selected event is in the stream and
// the route's consumer has nothing left to deliver or to have acknowledged,
// so that no duplicate is still to come. It returns the whole stream, read
// again with kinesalitetest's reader, by event id.
func waitAllDelivered(t *testing.T, stream *streamTail, p *crashServe, consumerName string, events []crashEvent, restarted time.Time) map[string]int {
	t.Helper()
	nc, err := nats.Connect(p.natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	var missing int
	var info *jetstream.ConsumerInfo
	var allIn time.Duration // from the restart until every event was in the stream
	pollUntil(t, 90*time.Second, 250*time.Millisecond, "every selected event in the stream and the route's consumer done", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var c jetstream.Consumer
		if c, err = js.Consumer(ctx, pipeline.EventsStream, consumerName); err == nil {
			info, err = c.Info(ctx)
		}
		missing = selectedIn(events) - countSelected(stream.read(t), events)
		if missing == 0 && allIn == 0 {
			allIn = time.Since(restarted)
		}
		return missing == 0 && err == nil && info.NumPending == 0 && info.NumAckPending == 0
	}, func() string {
		return fmt.Sprintf("%d selected events missing; consumer %+v (error %v)\nlast lines of sluice:\n%s", missing, info, err, p.tail())
	})
	// The events the killed process held are delivered again once their
	// AckWait has passed.
	t.Logf("after the restart: every selected event in the stream in %s, nothing left to acknowledge in %s",
		allIn.Round(100*time.Millisecond), time.Since(restarted).Round(100*time.Millisecond))
	logStored(t, js, len(events)+1) // and the marker
	return stream.readAll(t)
}

// logStored logs how many HTTP request events JetStream holds beside how
// many were published: more would be events of a request sent again after
// the kill that JetStream stored twice.
func logStored(t *testing.T, js jetstream.JetStream, published int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	stream, err := js.Stream(ctx, pipeline.EventsStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx, jetstream.WithSubjectFilter(schemas.EventSubject("*", "http_request_complete.v0")))
	if err != nil {
		t.Fatal(err)
	}
	var stored uint64
	for _, n := range info.State.Subjects {
		stored += n
	}
	t.Logf("JetStream holds %d HTTP request events for %d published", stored, published)
}

// checkCrashDelivery checks that the stream holds every selected event and
// nothing else, and reports the duplicates.
func checkCrashDelivery(t *testing.T, got map[string]int, events []crashEvent, marker string) {
	t.Helper()
	want := make(map[string]bool, len(events))
	for _, ev := range events {
		want[ev.id] = ev.selected
	}
	var distinct, duplicates, missing, unexpected int
	for id, n := range got {
		selected, published := want[id]
		switch {
		case id == marker:
			duplicates += n - 1
		case !published || !selected:
			unexpected++
		default:
			distinct++
			duplicates += n - 1
		}
	}
	for id, selected := range want {
		if selected && got[id] == 0 {
			missing++
		}
	}
	t.Logf("published %d events (%d selected by the filter): delivered %d distinct, %d missing, %d duplicates, %d not selected",
		len(events), selectedIn(events), distinct, missing, duplicates, unexpected)
	if missing > 0 || unexpected > 0 {
		t.Errorf("%d selected events missing, %d events in the stream that the subscription does not select", missing, unexpected)
	}
	if duplicates > crashMaxDuplicates {
		t.Errorf("%d duplicates, more than the %d events that can be in flight at a crash", duplicates, crashMaxDuplicates)
	}
}

// pollUntil calls done every interval until it returns true, and fails the test
// when timeout passes first, saying what it waited for and, when given,
// what describe says.
func pollUntil(t *testing.T, timeout, interval time.Duration, what string, done func() bool, describe ...func() string) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for !done() {
		select {
		case <-deadline.C:
			var details []string
			for _, d := range describe {
				details = append(details, d())
			}
			t.Fatalf("waited %s for %s\n%s", timeout, what, strings.Join(details, "\n"))
		case <-tick.C:
		}
	}
}

// crashEvent is an event the crash test publishes.
type crashEvent struct {
	id       string
	selected bool   // the subscription's filter passes it
	json     []byte // as sent to POST /events
}

// newCrashEvents returns n HTTP request events with their ids set, so that
// a batch sent again after a failed request keeps them; three in four are
// on port 443, which the subscription selects.
func newCrashEvents(n int) []crashEvent {
	events := make([]crashEvent, n)
	for i := range events {
		id := schemas.NewID("ev_")
		port := 443
		if i%4 == 3 {
			port = 80
		}
		events[i] = crashEvent{id: id, selected: port == 443, json: fmt.Appendf(nil,
			`{"event_id":%q,"event_type":"http_request_complete.v0","object":{"conn":{"client_ip":"203.0.113.%d","server_port":%d},"http":{"request":{"method":"get","url":{"path":"/items/%d"}},"response":{"status_code":200}}}}`,
			id, i%250, port, i)}
	}
	return events
}

// selectedIn counts the events the subscription selects.
func selectedIn(events []crashEvent) int {
	n := 0
	for _, ev := range events {
		if ev.selected {
			n++
		}
	}
	return n
}

// countSelected counts the selected events that are in the stream.
func countSelected(got map[string]int, events []crashEvent) int {
	n := 0
	for _, ev := range events {
		if ev.selected && got[ev.id] > 0 {
			n++
		}
	}
	return n
}

// streamTail reads a stream's records as they come, each once, keeping
// each shard's iterator between reads: cheap enough to poll while sluice
// delivers, where reading the whole stream again each time is not.
type streamTail struct {
	kl        *kinesalitetest.Server
	streamARN string
	client    *kinesis.Client
	iterators map[string]*string // by shard id
	seen      map[string]int     // records by event id
}

func newStreamTail(t *testing.T, kl *kinesalitetest.Server, streamARN string) *streamTail {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := &streamTail{kl: kl, streamARN: streamARN, client: kl.Client(), iterators: map[string]*string{}, seen: map[string]int{}}
	// kinesalite takes stream names, not ARNs.
	_, name, _ := strings.Cut(streamARN, ":stream/")
	shards, err := s.client.ListShards(ctx, &kinesis.ListShardsInput{StreamName: aws.String(name)})
	if err != nil {
		t.Fatalf("listing the shards of %s: %v", streamARN, err)
	}
	for _, shard := range shards.Shards {
		it, err := s.client.GetShardIterator(ctx, &kinesis.GetShardIteratorInput{
			StreamName:        aws.String(name),
			ShardId:           shard.ShardId,
			ShardIteratorType: types.ShardIteratorTypeTrimHorizon,
		})
		if err != nil {
			t.Fatalf("getting an iterator of shard %s: %v", aws.ToString(shard.ShardId), err)
		}
		s.iterators[aws.ToString(shard.ShardId)] = it.ShardIterator
	}
	return s
}

// read reads the records added since the last read, one page per shard
// (up to 10,000 records), so that it does not chase records still arriving,
// and returns every record read so far, by event id. The map is the tail's
// own.
func (s *streamTail) read(t *testing.T) map[string]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for shard, it := range s.iterators {
		out, err := s.client.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: it})
		if err != nil {
			t.Fatalf("getting records of shard %s: %v", shard, err)
		}
		for _, r := range out.Records {
			s.seen[aws.ToString(r.PartitionKey)]++
		}
		if out.NextShardIterator != nil {
			s.iterators[shard] = out.NextShardIterator
		}
	}
	return s.seen
}

// readAll reads the whole stream again, with kinesalitetest's reader, and
// counts its records by event id, checking that each is the envelope of
// the event its partition key names.
func (s *streamTail) readAll(t *testing.T) map[string]int {
	t.Helper()
	records := s.kl.ReadAll(t, s.streamARN)
	got := make(map[string]int, len(records))
	for _, r := range records {
		var ev struct {
			ID string `json:"event_id"`
		}
		if err := json.Unmarshal(r.Data, &ev); err != nil || ev.ID != r.PartitionKey {
			t.Fatalf("record with partition key %s is not its event's envelope (%v): %s", r.PartitionKey, err, r.Data)
		}
		got[r.PartitionKey]++
	}
	return got
}

// postEventBatch sends a batch to POST /events and checks that the ids of
// the 202 answer are the events' own.
func postEventBatch(ctx context.Context, client *http.Client, url string, batch []crashEvent) error {
	body := []byte{'['}
	for i, ev := range batch {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, ev.json...)
	}
	body = append(body, ']')
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/events", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+crashToken)
	req.Header.Set("Service-Version", "2")
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusAccepted {
		return &ingestRefused{status: resp.StatusCode, body: string(out)}
	}
	var accepted struct {
		EventIDs []string `json:"event_ids"`
	}
	if err := json.Unmarshal(out, &accepted); err != nil {
		return fmt.Errorf("decoding the 202 answer %s: %w", out, err)
	}
	for i, ev := range batch {
		if i >= len(accepted.EventIDs) || accepted.EventIDs[i] != ev.id {
			return fmt.Errorf("the 202 answer's event_ids do not match the ids sent: %s", out)
		}
	}
	return nil
}

// ingestRefused is an answer other than 202 to POST /events.
type ingestRefused struct {
	status int
	body   string
}

func (e *ingestRefused) Error() string { return fmt.Sprintf("POST /events: %d %s", e.status, e.body) }

// worthResending reports whether a failed POST /events may succeed when sent
// again: the server was unreachable or answered 503.
func worthResending(err error) bool {
	var refused *ingestRefused
	if errors.As(err, &refused) {
		return refused.status == http.StatusServiceUnavailable
	}
	return true
}

// currentServer is the URL of the sluice serve currently running.
type currentServer struct {
	mu      sync.Mutex
	url     string
	changed chan struct{} // closed when url changes
}

func newCurrentServer(url string) *currentServer {
	return &currentServer{url: url, changed: make(chan struct{})}
}

func (r *currentServer) get() (string, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.url, r.changed
}

func (r *currentServer) set(url string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.url = url
	close(r.changed)
	r.changed = make(chan struct{})
}

// eventPublisher publishes events in batches, in order, to whichever sluice
// serve runs, sending a batch again (same ids) until it is accepted.
type eventPublisher struct {
	server  *currentServer
	events  []crashEvent
	pauseAt int
	client  *http.Client
	resumed chan struct{}
	done    chan struct{}
	err     error // set before done closes

	mu       sync.Mutex
	accepted int // events[:accepted] were answered 202
	attempts int // requests that failed and were sent again
}

// startPublisher starts publishing; it stops at pauseAt until resume. The
// test's end stops it.
func startPublisher(t *testing.T, server *currentServer, events []crashEvent, pauseAt int) *eventPublisher {
	ctx, cancel := context.WithCancel(context.Background())
	p := &eventPublisher{
		server: server, events: events, pauseAt: pauseAt,
		client:  &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{}},
		resumed: make(chan struct{}), done: make(chan struct{}),
	}
	go func() {
		defer close(p.done)
		p.err = p.run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-p.done
		p.client.CloseIdleConnections()
	})
	return p
}

func (p *eventPublisher) run(ctx context.Context) error {
	for start := 0; start < len(p.events); start += crashBatch {
		if start == p.pauseAt {
			select {
			case <-p.resumed:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := p.send(ctx, p.events[start:min(start+crashBatch, len(p.events))]); err != nil {
			return err
		}
		p.mu.Lock()
		p.accepted = min(start+crashBatch, len(p.events))
		p.mu.Unlock()
	}
	return nil
}

// send sends a batch until it is accepted, again at once when another
// server starts, or after a short delay.
func (p *eventPublisher) send(ctx context.Context, batch []crashEvent) error {
	for {
		url, changed := p.server.get()
		err := postEventBatch(ctx, p.client, url, batch)
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case !worthResending(err):
			return err
		}
		p.mu.Lock()
		p.attempts++
		p.mu.Unlock()
		retry := time.NewTimer(100 * time.Millisecond)
		select {
		case <-changed:
		case <-retry.C:
		case <-ctx.Done():
		}
		retry.Stop()
	}
}

func (p *eventPublisher) resume() { close(p.resumed) }

// acked returns how many events, from the first, were answered 202.
func (p *eventPublisher) acked() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// resent returns how many requests failed and were sent again.
func (p *eventPublisher) resent() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.attempts
}

// failed returns the error the publisher stopped with, or nil while it
// runs or when it published everything.
func (p *eventPublisher) failed() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}

// wait waits until every event is published.
func (p *eventPublisher) wait(timeout time.Duration) error {
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		return fmt.Errorf("not every event published within %s: %d of %d", timeout, p.acked(), len(p.events))
	}
}
