package ingest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/store"
)

// testEnv is sluice's HTTP API, POST /events routed on it, on a real
// in-process NATS server (apitest) or on fakes (newFakeEnv).
type testEnv struct {
	url     string
	client  *http.Client // checks every exchange against docs/openapi.yaml
	token   string
	account string
	stream  jetstream.Stream // nil in a fake env
	js      jetstream.JetStream
	reg     *prometheus.Registry
	store   *store.Store // nil in a fake env
	keyID   string       // the id of token's key
}

func newTestEnv(t *testing.T, opts ...apitest.Option) *testEnv {
	t.Helper()
	st := apitest.Start(t, opts...)
	return &testEnv{url: st.URL, client: apitest.DocumentedClient(t, "../../docs/openapi.yaml"), token: st.Token, account: st.AccountID,
		stream: st.Stream, js: st.JS, reg: st.Metrics, store: st.Store, keyID: st.KeyID}
}

// routeIngest routes POST /events on srv, behind its front door, as
// sluice serve does with the ingest role.
func routeIngest(t testing.TB, srv *api.Server, pub ingest.Publisher, reg prometheus.Registerer) {
	t.Helper()
	in, err := ingest.New(ingest.Config{}, ingest.Deps{Door: srv.FrontDoor(), Publisher: pub, Logger: slog.New(slog.DiscardHandler), Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	srv.Handle(ingest.Pattern, in)
}

// post sends body to POST /events with the usual headers, changed by edit.
func (e *testEnv) post(t *testing.T, body []byte, edit func(*http.Request)) (*http.Response, []byte) {
	t.Helper()
	return e.do(t, http.MethodPost, "/events", e.token, bytes.NewReader(body), func(req *http.Request) {
		req.Header.Set("Content-Type", "application/json")
		if edit != nil {
			edit(req)
		}
	})
}

// call sends a management request with the usual headers and the key's
// token.
func (e *testEnv) call(t *testing.T, token, method, path, body string) (*http.Response, []byte) {
	t.Helper()
	return e.do(t, method, path, token, bytes.NewReader([]byte(body)), func(req *http.Request) {
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
	})
}

// do sends a request with the key's token and Service-Version: 2, changed
// by edit, through the client that checks it against docs/openapi.yaml, and
// returns the response with its body read.
func (e *testEnv) do(t *testing.T, method, path, token string, body io.Reader, edit func(*http.Request)) (*http.Response, []byte) {
	t.Helper()
	return apitest.Do(t, e.client, e.url, method, path, token, body, edit)
}

// stored returns the number of messages in the stream.
func (e *testEnv) stored(t *testing.T) uint64 {
	t.Helper()
	info, err := e.stream.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// storedEvent is an event as stored in the stream.
type storedEvent struct {
	ID   string `json:"event_id"`
	Type string `json:"event_type"`
}

// storedEvents returns every event of the account in the stream, in the
// order stored.
func (e *testEnv) storedEvents(t *testing.T, account string) []storedEvent {
	t.Helper()
	var events []storedEvent
	for _, data := range apitest.StoredEvents(t, e.stream, account) {
		var ev storedEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			t.Fatalf("stored event %s: %v", data, err)
		}
		events = append(events, ev)
	}
	return events
}
