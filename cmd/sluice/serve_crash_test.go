package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

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
	crashPauseAt = 3 * crashEvents / 4
	// The process is killed once the route's consumer has at least
	// crashKillAfter published events acknowledged (delivered, or not
	// selected) and at least crashMinBacklog not yet handed out.
	crashKillAfter  = 500
	crashMinBacklog = 1000
	// crashMaxDuplicates bounds the events delivered twice: the records
	// of the batch being written when the process died, and those of the
	// batches whose acks the killed NATS server had not written to disk
	// (it writes a consumer's state at most every 100 ms); with a margin,
	// all a worker can hold: its prefetch and a Kinesis batch for each of
	// the batches it writes at once.
	crashMaxDuplicates = pipeline.DefaultPrefetch + pipeline.DefaultConcurrency*500
	// crashAckWait is the route consumer's AckWait (serve's --ack-wait,
	// given as SLUICE_ACK_WAIT): the events the killed process held are
	// delivered again once it has passed.
	crashAckWait = 5 * time.Second
	// crashRoutePause is how long the route's consumer is paused
	// (JetStream's consumer pause) while the publisher starts: delivery
	// into kinesalite can keep up with it, and then no backlog forms.
	crashRoutePause = 2 * time.Second
)

// TestServeCrashLosesNothing kills `sluice serve` with SIGKILL while it
// delivers a backlog to Kinesis (kinesalite) and starts it again on the
// same data dir while events keep coming: every event the API accepted and
// the subscription selects reaches the stream, none it does not select
// does, and the duplicates are counted, reported and bounded. serve runs
// with --ack-wait crashAckWait, shorter than the default 30 s, so that the
// events the killed process held are delivered again within seconds.
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

	first := startCrashServe(t, bin, dataDir, kl, "SLUICE_BOOTSTRAP_API_KEY="+crashToken)
	consumer := createCrashRoute(t, first.url, streamARN)
	first.waitLog(t, "route delivering")
	marker := waitMarkerDelivered(t, first.url, stream)

	events := newCrashEvents(crashEvents)
	server := newCurrentServer(first.url)
	// The route waits while the publisher gets ahead, so that a backlog
	// is there to be cut by the kill however fast delivery keeps up.
	route := watchRouteConsumer(t, first, consumer)
	route.pause(t, time.Now().Add(crashRoutePause))
	pub := startPublisher(t, server, events, crashPauseAt)

	atKill := waitMidDelivery(t, route, pub)
	first.kill(t)
	route.close()
	published := pub.acked()
	delivered := countSelected(stream.readAll(t), events[:published])
	t.Logf("killed sluice with %d events published (%d selected), %d of them delivered; just before the kill, the route's consumer had %d events acknowledged and %d not handed out",
		published, selectedIn(events[:published]), delivered, atKill.AckFloor.Consumer-1, atKill.NumPending)
	if delivered >= selectedIn(events[:published]) {
		t.Fatalf("delivery had caught up when sluice was killed: %d of %d delivered; the test needs a backlog", delivered, selectedIn(events[:published]))
	}

	second := startCrashServe(t, bin, dataDir, kl)
	restarted := time.Now()
	server.set(second.url)
	pub.resume()
	if err := pub.wait(90 * time.Second); err != nil {
		t.Fatalf("publishing: %v\nfirst process:\n%s\nsecond process:\n%s", err, first.tail(), second.tail())
	}
	got := waitAllDelivered(t, stream, second, consumer, events, restarted)
	checkCrashDelivery(t, got, events, marker, crashMaxDuplicates)
	t.Logf("requests to POST /events that failed (during the kill and restart) and were sent again: %d; run time %s", pub.resent(), time.Since(began).Round(100*time.Millisecond))
}

// startCrashServe starts a `sluice serve` of the crash test: delivering
// to kinesalite, with a short ack wait, and its embedded NATS server on a
// loopback port, which it logs, so that the test can watch the route's
// consumer.
func startCrashServe(t *testing.T, bin, dataDir string, kl *kinesalitetest.Server, env ...string) *serveProcess {
	t.Helper()
	env = append(append(kl.Env(), "SLUICE_NATS_LISTEN=127.0.0.1:0", "SLUICE_ACK_WAIT="+crashAckWait.String()), env...)
	return startServe(t, bin, dataDir, env...)
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

// waitMidDelivery waits until delivery is under way with a backlog, as
// the route's consumer counts the events: at least crashKillAfter published
// ones acknowledged and at least crashMinBacklog not yet handed out. Its
// counts are as fresh as a request, where the stream's tail lags: delivery
// is fast, and reading thousands of records from kinesalite takes a while.
// It returns the consumer's state.
func waitMidDelivery(t *testing.T, route *routeConsumer, pub *eventPublisher) *jetstream.ConsumerInfo {
	t.Helper()
	var (
		info *jetstream.ConsumerInfo
		err  error
	)
	pollUntil(t, 30*time.Second, 5*time.Millisecond, "delivery in the middle of a backlog", func() bool {
		if err := pub.failed(); err != nil {
			t.Fatalf("publishing: %v", err)
		}
		if info, err = route.info(); err != nil {
			return false
		}
		// The marker was the first event acknowledged.
		return info.AckFloor.Consumer >= 1+crashKillAfter && info.NumPending >= crashMinBacklog
	}, func() string {
		return fmt.Sprintf("the route's consumer: %+v (error %v)", info, err)
	})
	return info
}

// waitAllDelivered waits until every selected event is in the stream and
// the route's consumer has nothing left to deliver or to have acknowledged,
// so that no duplicate is still to come. It returns the whole stream, read
// again with kinesalitetest's reader, by event id.
func waitAllDelivered(t *testing.T, stream *streamTail, p *serveProcess, consumerName string, events []crashEvent, restarted time.Time) map[string]int {
	t.Helper()
	route := watchRouteConsumer(t, p, consumerName)
	defer route.close()
	var (
		missing int
		info    *jetstream.ConsumerInfo
		err     error
		allIn   time.Duration // from the restart until every event was in the stream
	)
	pollUntil(t, 90*time.Second, 250*time.Millisecond, "every selected event in the stream and the route's consumer done", func() bool {
		info, err = route.info()
		missing = selectedIn(events) - countSelected(stream.read(t), events)
		if missing == 0 && allIn == 0 {
			allIn = time.Since(restarted)
		}
		return missing == 0 && err == nil && info.NumPending == 0 && info.NumAckPending == 0
	}, func() string {
		return fmt.Sprintf("%d selected events missing; consumer %+v (error %v)\nlast lines of sluice:\n%s", missing, info, err, p.tail())
	})
	// The events the killed process held are delivered again once
	// crashAckWait has passed.
	t.Logf("after the restart: every selected event in the stream in %s, nothing left to acknowledge in %s",
		allIn.Round(100*time.Millisecond), time.Since(restarted).Round(100*time.Millisecond))
	logStored(t, route.js, len(events)+1) // and the marker
	return stream.readAll(t)
}

// routeConsumer reads the state of a route's consumer from the embedded
// NATS server of a `sluice serve`.
type routeConsumer struct {
	nc   *nats.Conn
	js   jetstream.JetStream
	name string
}

// watchRouteConsumer connects to the NATS server that p logged it listens
// on; close, or the test's end, disconnects.
func watchRouteConsumer(t *testing.T, p *serveProcess, name string) *routeConsumer {
	t.Helper()
	nc, err := nats.Connect(p.logAttr(t, "the embedded NATS server is listening", "nats_url"), sluiceNkey(t, p.logAttr(t, "the embedded NATS server is listening", "nats_nkey")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return &routeConsumer{nc: nc, js: js, name: name}
}

// info asks the server for the consumer's state.
func (c *routeConsumer) info() (*jetstream.ConsumerInfo, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	consumer, err := c.js.Consumer(ctx, pipeline.EventsStream, c.name)
	if err != nil {
		return nil, err
	}
	return consumer.CachedInfo(), nil
}

func (c *routeConsumer) close() { c.nc.Close() }

// pause pauses the route's consumer until the time: its pulls get nothing
// until then, and it delivers again by itself after.
func (c *routeConsumer) pause(t *testing.T, until time.Time) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.js.PauseConsumer(ctx, pipeline.EventsStream, c.name, until); err != nil {
		t.Fatalf("pausing the route's consumer: %v", err)
	}
}

// resume resumes the route's paused consumer.
func (c *routeConsumer) resume(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.js.ResumeConsumer(ctx, pipeline.EventsStream, c.name); err != nil {
		t.Fatalf("resuming the route's consumer: %v", err)
	}
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
// nothing else, and reports the duplicates, failing the test past
// maxDuplicates.
func checkCrashDelivery(t *testing.T, got map[string]int, events []crashEvent, marker string, maxDuplicates int) {
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
	if duplicates > maxDuplicates {
		t.Errorf("%d duplicates, more than the %d events that can be in flight at the crashes", duplicates, maxDuplicates)
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
