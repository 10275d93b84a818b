package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/producer"
	"github.com/sluicehq/sluice/schemas"
)

// newFakeEnv is a sluice API on fakes: no NATS. Its stream and js are nil.
func newFakeEnv(t *testing.T, cfg api.Config, keys apiconv.Keys, pub api.Publisher) *testEnv {
	t.Helper()
	reg := prometheus.NewRegistry()
	srv, err := api.New(cfg, api.Deps{
		Keys:      keys,
		Publisher: pub,
		Logger:    slog.New(slog.DiscardHandler),
		Metrics:   reg,
	})
	if err != nil {
		t.Fatal(err)
	}
	routeIngest(t, srv, pub, reg)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &testEnv{url: hs.URL, client: apitest.DocumentedClient(t, "../../docs/openapi.yaml"), token: apitest.FakeToken, reg: reg}
}

func eventIDs(events []apitest.WireEvent) []string {
	ids := make([]string, len(events))
	for i, ev := range events {
		ids[i] = ev.ID
	}
	return ids
}

// detailIDs returns details.event_ids of an error body.
func detailIDs(t *testing.T, body apitest.ErrorBody) []string {
	t.Helper()
	return apitest.DetailJSON[[]string](t, body, "event_ids")
}

// TestIngestNotStored answers 503 with every id, in request order, when
// JetStream did not store some of the events.
func TestIngestNotStored(t *testing.T) {
	events := apitest.Samples(t, 4, 6)
	pub := apitest.FakePublisher{Publish: func(ctx context.Context, evs []schemas.Encoded) []producer.Result {
		results := apitest.StoreAll(ctx, evs)
		for i := range results {
			if i%3 == 1 {
				results[i].Err = fmt.Errorf("%w: %w", producer.ErrNotStored, nats.ErrTimeout)
			}
		}
		return results
	}}
	e := newFakeEnv(t, api.Config{}, apitest.FakeKeysFor("ac_fake"), pub)

	resp, out := e.post(t, apitest.MustJSON(t, events), nil)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503: %s", resp.StatusCode, out)
	}
	if got := resp.Header.Get("Retry-After"); got == "" {
		t.Error("no Retry-After header")
	}
	body := apitest.DecodeError(t, out)
	if body.ErrorCode != "ERR_SLUICE_101" || !strings.Contains(body.Msg, "2 of 6 events") {
		t.Fatalf("got %s %q, want ERR_SLUICE_101 saying 2 of 6 events", body.ErrorCode, body.Msg)
	}
	if got, want := detailIDs(t, body), eventIDs(events); !slices.Equal(got, want) {
		t.Fatalf("details.event_ids = %v, want %v", got, want)
	}
}

// TestIngestOverMaxPayload answers 413 ERR_SLUICE_312 when an event is over
// the NATS server's max_payload.
func TestIngestOverMaxPayload(t *testing.T) {
	events := apitest.Samples(t, 5, 3)
	pub := apitest.FakePublisher{Publish: func(ctx context.Context, evs []schemas.Encoded) []producer.Result {
		results := apitest.StoreAll(ctx, evs)
		results[1].Err = fmt.Errorf("%w: %w", producer.ErrNotStored, nats.ErrMaxPayload)
		return results
	}}
	e := newFakeEnv(t, api.Config{}, apitest.FakeKeysFor("ac_fake"), pub)

	resp, out := e.post(t, apitest.MustJSON(t, events), nil)
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413: %s", resp.StatusCode, out)
	}
	body := apitest.DecodeError(t, out)
	if body.ErrorCode != "ERR_SLUICE_312" || !strings.Contains(body.Msg, "max_payload") || !strings.Contains(body.Msg, events[1].ID) {
		t.Fatalf("got %s %q, want ERR_SLUICE_312 naming max_payload and %s", body.ErrorCode, body.Msg, events[1].ID)
	}
	if got, want := detailIDs(t, body), eventIDs(events); !slices.Equal(got, want) {
		t.Fatalf("details.event_ids = %v, want %v", got, want)
	}
}

// TestIngestKeyStoreUnreachable answers 503 ERR_SLUICE_102 when keys cannot
// be checked.
func TestIngestKeyStoreUnreachable(t *testing.T) {
	keys := apitest.FakeKeys{Auth: func(context.Context, string) (store.APIKey, error) {
		return store.APIKey{}, errors.New("fake keys: nats: timeout")
	}}
	e := newFakeEnv(t, api.Config{}, keys, apitest.FakePublisher{Publish: apitest.StoreAll})

	resp, out := e.post(t, apitest.MustJSON(t, apitest.Samples(t, 6, 1)), nil)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("status %d, Retry-After %q, want 503 with Retry-After: %s", resp.StatusCode, resp.Header.Get("Retry-After"), out)
	}
	if body := apitest.DecodeError(t, out); body.ErrorCode != "ERR_SLUICE_102" {
		t.Fatalf("error code %s, want ERR_SLUICE_102", body.ErrorCode)
	}
}

// TestIngestCountsEveryResponse counts the responses of the middleware and
// of a panic in sluice_ingest_requests_total, as well as the handler's.
func TestIngestCountsEveryResponse(t *testing.T) {
	pub := apitest.FakePublisher{Publish: func(ctx context.Context, evs []schemas.Encoded) []producer.Result {
		if strings.HasPrefix(evs[0].Type, "tcp_") {
			panic("fake publisher panics on tcp events")
		}
		return apitest.StoreAll(ctx, evs)
	}}
	e := newFakeEnv(t, api.Config{}, apitest.FakeKeysFor("ac_fake"), pub)
	good := apitest.MustJSON(t, []apitest.WireEvent{{Type: "ip_policy_created.v0", Object: json.RawMessage(`{}`)}})
	panics := apitest.MustJSON(t, []apitest.WireEvent{{Type: "tcp_connection_closed.v0", Object: json.RawMessage(`{}`)}})

	requests := []struct {
		body   []byte
		edit   func(*http.Request)
		status int
	}{
		{good, func(r *http.Request) { r.Header.Set("Authorization", "Bearer sk_nope") }, 401},
		{good, func(r *http.Request) { r.Header.Del("Authorization") }, 401},
		{good, func(r *http.Request) { r.Header.Set("Service-Version", "1") }, 400},
		{good, nil, 202},
		{panics, nil, 500},
	}
	for _, req := range requests {
		if resp, out := e.post(t, req.body, req.edit); resp.StatusCode != req.status {
			t.Fatalf("status %d, want %d: %s", resp.StatusCode, req.status, out)
		}
	}
	for code, want := range map[string]float64{"401": 2, "400": 1, "202": 1, "500": 1} {
		if got := apitest.CounterValue(t, e.reg, "sluice_ingest_requests_total", "code", code); got != want {
			t.Errorf("sluice_ingest_requests_total{code=%q} = %v, want %v", code, got, want)
		}
	}
}

// TestIngestDuplicatesAddNoUnknownFields counts unknown fields only for
// events stored, not for duplicates of events stored before.
func TestIngestDuplicatesAddNoUnknownFields(t *testing.T) {
	pub := apitest.FakePublisher{Publish: func(ctx context.Context, evs []schemas.Encoded) []producer.Result {
		results := apitest.StoreAll(ctx, evs)
		for i := range results {
			results[i].Duplicate = true
		}
		return results
	}}
	e := newFakeEnv(t, api.Config{}, apitest.FakeKeysFor("ac_fake"), pub)
	body := `[{"event_type":"tcp_connection_closed.v0","object":{"conn":{"bytes_in":1,"zone":"b"},"edge_version":"9"}}]`
	if resp, out := e.post(t, []byte(body), nil); resp.StatusCode != http.StatusAccepted || !strings.Contains(string(out), `"duplicates":1`) {
		t.Fatalf("status %d: %s", resp.StatusCode, out)
	}
	if got := apitest.CounterValue(t, e.reg, "sluice_ingest_unknown_fields_total", "event_type", "tcp_connection_closed.v0"); got != 0 {
		t.Fatalf("unknown fields of a duplicate counted %v times, want 0", got)
	}
}

// TestIngestRefusesBeyondMaxInFlight answers 503 ERR_SLUICE_103 at once to
// a request arriving while MaxInFlight requests are being processed.
func TestIngestRefusesBeyondMaxInFlight(t *testing.T) {
	entered := make(chan struct{}, 3) // one per request that reaches the publisher
	release := make(chan struct{})
	pub := apitest.FakePublisher{Publish: func(ctx context.Context, evs []schemas.Encoded) []producer.Result {
		entered <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return apitest.StoreAll(ctx, evs)
	}}
	e := newFakeEnv(t, api.Config{DoorConfig: apiconv.DoorConfig{MaxInFlight: 1}}, apitest.FakeKeysFor("ac_fake"), pub)
	body := apitest.MustJSON(t, apitest.Samples(t, 7, 2))

	type answer struct {
		status int
		err    error
	}
	first := make(chan answer, 1)
	go func() {
		status, err := postStatus(e.url, e.token, body)
		first <- answer{status, err}
	}()
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the first request did not reach the publisher")
	}

	resp, out := e.post(t, body, nil)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("second request: status %d, Retry-After %q, want 503 with Retry-After: 1: %s", resp.StatusCode, resp.Header.Get("Retry-After"), out)
	}
	if got := apitest.DecodeError(t, out).ErrorCode; got != "ERR_SLUICE_103" {
		t.Fatalf("second request: error code %s, want ERR_SLUICE_103", got)
	}

	close(release)
	a := <-first
	if a.err != nil || a.status != http.StatusAccepted {
		t.Fatalf("first request: status %d, error %v, want 202", a.status, a.err)
	}
	// The slot is free again.
	if resp, out := e.post(t, body, nil); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("third request: status %d, want 202: %s", resp.StatusCode, out)
	}
}

// postStatus sends body to POST /events and returns the status. It does not
// use t, so that it can run on another goroutine.
func postStatus(url, token string, body []byte) (int, error) {
	req, err := http.NewRequest(http.MethodPost, url+"/events", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Service-Version", "2")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}
