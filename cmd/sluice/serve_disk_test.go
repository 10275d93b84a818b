package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/disktest"
	"github.com/sluicehq/sluice/pipeline"
)

// diskToken is the bootstrap API key of the full-disk test.
const diskToken = "sk_test_disk_bootstrap_token_0123456789"

// diskSize is the size of the tmpfs the full-disk test stores on.
const diskSize = 64 << 20

// timedPost posts one event and returns the status, the body and how long
// the answer took.
func timedPost(t *testing.T, url string) (int, string, time.Duration) {
	t.Helper()
	start := time.Now()
	code, body := request(t, http.MethodPost, url+"/events", diskToken, `[{"event_type":"http_request_complete.v0","object":{"conn":{"server_port":443}}}]`)
	return code, body, time.Since(start)
}

// acceptedIDs returns the event ids of a 202 body.
func acceptedIDs(t *testing.T, body string) []string {
	t.Helper()
	var resp struct {
		EventIDs []string `json:"event_ids"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatalf("202 body %s: %v", body, err)
	}
	return resp.EventIDs
}

// streamEvent is an event as stored in SLUICE_EVENTS.
type streamEvent struct {
	ID       string
	Type     string
	ObjectID string // the id of an audit event's resource
}

// streamEventIDs returns the ids of the events in SLUICE_EVENTS, read over
// nc.
func streamEventIDs(t *testing.T, nc *nats.Conn) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	for _, ev := range streamEvents(t, nc) {
		ids[ev.ID] = true
	}
	return ids
}

// streamEvents returns the events in SLUICE_EVENTS, read over nc.
func streamEvents(t *testing.T, nc *nats.Conn) []streamEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(ctx, pipeline.EventsStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var events []streamEvent
	if info.State.Msgs == 0 {
		return events
	}
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(0); seq < info.State.LastSeq; {
		msg, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			t.Fatalf("reading %s after sequence %d of %d: %v", pipeline.EventsStream, seq, info.State.LastSeq, err)
		}
		meta, err := msg.Metadata()
		if err != nil {
			t.Fatal(err)
		}
		seq = meta.Sequence.Stream
		var ev struct {
			ID     string `json:"event_id"`
			Type   string `json:"event_type"`
			Object struct {
				ID string `json:"id"`
			} `json:"object"`
		}
		if err := json.Unmarshal(msg.Data(), &ev); err != nil {
			t.Fatal(err)
		}
		events = append(events, streamEvent{ID: ev.ID, Type: ev.Type, ObjectID: ev.Object.ID})
	}
	return events
}

// destinationBody is a destination the full-disk test creates.
const destinationBody = `{"description":"full disk","target":{"kinesis":{"stream_arn":"arn:aws:kinesis:us-east-1:123456789012:stream/s","auth":{"role":{"role_arn":"arn:aws:iam::123456789012:role/r"}}}}}`

// TestServeFullDisk runs sluice serve with its embedded NATS server storing
// on a small tmpfs, fills the tmpfs, and checks what sluice does while
// there is no space and after space returns: ingest answers at once that
// storage is full, /readyz is not ready, a management change is refused
// with nothing stored; once the filler is gone, sluice takes events and
// changes again by itself within seconds, every event it answered 202 is
// in the stream, and so is the audit event of every change it made.
//
// The figures it logs (time to answer while full, time to recover) are
// those of docs/operations.md:
//
//	go test -run TestServeFullDisk -v ./cmd/sluice/
//
// The route's pull requests do not outlive the full disk: its worker makes
// new ones once it has received nothing for --repull-after, 1 s here
// rather than the default 10 s, so that the event posted after space
// returned is delivered within a second or two.
func TestServeFullDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary on a tmpfs it fills")
	}
	disk := disktest.Mount(t, diskSize)
	bin := buildSluice(t)
	clearSluiceEnv(t)
	p := startServe(t, bin, filepath.Join(disk, "data"), "SLUICE_BOOTSTRAP_API_KEY="+diskToken, "SLUICE_NATS_LISTEN=127.0.0.1:0", "SLUICE_DEV=true", "SLUICE_DEV_AWS_LISTEN=127.0.0.1:0",
		"SLUICE_REPULL_AFTER=1s")
	endpoint := p.logAttr(t, "dev mode: every destination delivers to the AWS emulator", "aws_endpoint")
	waitReady(t, p.url)
	nc, err := nats.Connect(p.logAttr(t, "the embedded NATS server is listening", "nats_url"), sluiceNkey(t, p.logAttr(t, "the embedded NATS server is listening", "nats_nkey")))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// A route to the emulator, to check that delivery goes on after.
	destID := createByToken(t, p.url+"/event_destinations", destinationBody)
	createByToken(t, p.url+"/event_subscriptions", `{"sources":[{"type":"http_request_complete.v0"}],"destination_ids":["`+destID+`"]}`)
	waitDelivered(t, p, endpoint)

	var accepted []string
	for range 10 {
		code, body, _ := timedPost(t, p.url)
		if code != http.StatusAccepted {
			t.Fatalf("POST /events before the disk is full: %d %s", code, body)
		}
		accepted = append(accepted, acceptedIDs(t, body)...)
	}

	filler := disktest.Fill(t, disk)
	// The first writes may still fit in the last pages the store's files
	// have; from the first that fails on, every answer is quick.
	var full bool
	for i := 0; i < 1000 && !full; i++ {
		code, body, took := timedPost(t, p.url)
		if code == http.StatusAccepted {
			accepted = append(accepted, acceptedIDs(t, body)...)
			continue
		}
		full = true
		t.Logf("POST /events on a full disk: %d in %s: %s", code, took.Round(time.Millisecond), body)
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "ERR_SLUICE_110") || !strings.Contains(body, "storage is full") {
			t.Errorf("POST /events on a full disk: %d %s; want 503 ERR_SLUICE_110 saying storage is full", code, body)
		}
		if took > time.Second {
			t.Errorf("POST /events on a full disk took %s to answer; want well under a second", took)
		}
	}
	if !full {
		t.Fatal("1000 events stored on a full disk")
	}
	code, body, took := timedPost(t, p.url)
	t.Logf("the next POST /events on a full disk: %d in %s", code, took.Round(time.Millisecond))
	if code != http.StatusServiceUnavailable || took > 500*time.Millisecond {
		t.Errorf("the next POST /events on a full disk: %d in %s: %s", code, took, body)
	}
	code, body = request(t, http.MethodGet, p.url+"/readyz", "", "")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "storage") {
		t.Errorf("/readyz on a full disk: %d %s; want 503 saying why", code, body)
	}
	start := time.Now()
	code, body = request(t, http.MethodPost, p.url+"/event_destinations", diskToken, destinationBody)
	t.Logf("POST /event_destinations on a full disk: %d in %s", code, time.Since(start).Round(time.Millisecond))
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "ERR_SLUICE_110") {
		t.Errorf("POST /event_destinations on a full disk: %d %s; want 503 ERR_SLUICE_110", code, body)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	freed := time.Now()
	pollUntil(t, 15*time.Second, 100*time.Millisecond, "POST /events to answer 202 after space returned", func() bool {
		code, body, _ := timedPost(t, p.url)
		if code == http.StatusAccepted {
			accepted = append(accepted, acceptedIDs(t, body)...)
		}
		return code == http.StatusAccepted
	}, p.tail)
	t.Logf("POST /events answered 202 again %s after space returned", time.Since(freed).Round(time.Millisecond))
	if code, body := request(t, http.MethodGet, p.url+"/readyz", "", ""); code != http.StatusOK {
		t.Errorf("/readyz after space returned: %d %s", code, body)
	}
	code, body = request(t, http.MethodPost, p.url+"/event_destinations", diskToken, destinationBody)
	if code != http.StatusCreated {
		t.Fatalf("POST /event_destinations after space returned: %d %s", code, body)
	}
	checkAudited(t, p, nc)
	waitDelivered(t, p, endpoint)

	stored := streamEventIDs(t, nc)
	for _, id := range accepted {
		if !stored[id] {
			t.Errorf("event %s answered 202 is not in the stream", id)
		}
	}
	t.Logf("%d events answered 202, all in the stream", len(accepted))
}

// createByToken POSTs body with the test's key and returns the id of the
// resource created.
func createByToken(t *testing.T, url, body string) string {
	t.Helper()
	code, out := request(t, http.MethodPost, url, diskToken, body)
	var created struct {
		ID string `json:"id"`
	}
	if code != http.StatusCreated || json.Unmarshal([]byte(out), &created) != nil || created.ID == "" {
		t.Fatalf("POST %s: %d %s", url, code, out)
	}
	return created.ID
}

// waitDelivered posts events until one reaches the Kinesis stream of
// destinationBody in the emulator at endpoint.
func waitDelivered(t *testing.T, p *serveProcess, endpoint string) {
	t.Helper()
	var posted []string
	pollUntil(t, 30*time.Second, time.Second, "an event delivered to the emulator", func() bool {
		if code, body, _ := timedPost(t, p.url); code == http.StatusAccepted {
			posted = append(posted, acceptedIDs(t, body)...)
		}
		out, _, err := runSluice(t, "", "tail", "--emulator", endpoint, "arn:aws:kinesis:us-east-1:123456789012:stream/s", "--since", "5m", "--follow=false")
		if err != nil {
			return false // the stream is made by the first delivery
		}
		for _, id := range posted {
			if strings.Contains(out, id) {
				return true
			}
		}
		return false
	}, p.tail)
}

// checkAudited checks that every destination of the account has its
// created event in the stream, within a few seconds (the relay's).
func checkAudited(t *testing.T, p *serveProcess, nc *nats.Conn) {
	t.Helper()
	code, body := request(t, http.MethodGet, p.url+"/event_destinations", diskToken, "")
	var list struct {
		Destinations []struct {
			ID string `json:"id"`
		} `json:"event_destinations"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &list) != nil {
		t.Fatalf("GET /event_destinations: %d %s", code, body)
	}
	var missing []string
	pollUntil(t, 15*time.Second, 200*time.Millisecond, "the audit event of every destination", func() bool {
		audited := map[string]bool{}
		for _, ev := range streamEvents(t, nc) {
			if ev.Type == "event_destination_created.v0" {
				audited[ev.ObjectID] = true
			}
		}
		missing = missing[:0]
		for _, d := range list.Destinations {
			if !audited[d.ID] {
				missing = append(missing, d.ID)
			}
		}
		return len(missing) == 0
	}, func() string { return fmt.Sprintf("destinations without their created event: %v", missing) })
}

// TestServeAuditSurvivesACrash makes a change while SLUICE_EVENTS refuses
// writes (a message limit reached, the KV bucket still writable), kills
// sluice serve right after the 201 and starts it again: the change's audit
// event, stored with it, reaches the stream through the new process's
// relay.
func TestServeAuditSurvivesACrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds, runs and kills the binary")
	}
	bin := buildSluice(t)
	dataDir := t.TempDir()
	p := startServe(t, bin, dataDir, "SLUICE_BOOTSTRAP_API_KEY="+diskToken, "SLUICE_NATS_LISTEN=127.0.0.1:0")
	waitReady(t, p.url)
	nc, err := nats.Connect(p.logAttr(t, "the embedded NATS server is listening", "nats_url"), sluiceNkey(t, p.logAttr(t, "the embedded NATS server is listening", "nats_nkey")))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(ctx, pipeline.EventsStream)
	if err != nil {
		t.Fatal(err)
	}
	cfg := stream.CachedInfo().Config
	cfg.MaxMsgs, cfg.Discard = 1, jetstream.DiscardNew
	if code, body, _ := timedPost(t, p.url); code != http.StatusAccepted {
		t.Fatalf("POST /events: %d %s", code, body)
	}
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	if code, body, _ := timedPost(t, p.url); code == http.StatusAccepted {
		t.Fatalf("POST /events stored with the stream full: %s", body)
	}
	start := time.Now()
	code, body := request(t, http.MethodPost, p.url+"/event_destinations", diskToken, destinationBody)
	if code != http.StatusCreated {
		t.Fatalf("POST /event_destinations: %d %s", code, body)
	}
	t.Logf("POST /event_destinations answered 201 in %s with the events stream refusing its audit event", time.Since(start).Round(time.Millisecond))
	p.kill(t)

	// The new process makes the stream as it should be again.
	p = startServe(t, bin, dataDir, "SLUICE_NATS_LISTEN=127.0.0.1:0")
	nc, err = nats.Connect(p.logAttr(t, "the embedded NATS server is listening", "nats_url"), sluiceNkey(t, p.logAttr(t, "the embedded NATS server is listening", "nats_nkey")))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	checkAudited(t, p, nc)
}
