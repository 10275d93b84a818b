// Package apitest starts sluice's HTTP API for tests: the real store,
// producer and stream on a real in-process NATS server, with one account
// and its API key. It is for tests only.
package apitest

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/api"
	"github.com/sluicehq/sluice/internal/natstest"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/producer"
	"github.com/sluicehq/sluice/store"
)

// Stack is a running API and what it stands on.
type Stack struct {
	URL       string // base URL of the API
	Token     string // an API key of AccountID
	AccountID string
	JS        jetstream.JetStream
	Stream    jetstream.Stream // SLUICE_EVENTS
	Store     *store.Store
	Metrics   *prometheus.Registry // where the API registered its metrics
}

// Start starts the stack; t.Cleanup stops it.
func Start(t testing.TB) *Stack {
	t.Helper()
	ctx := context.Background()
	nc, js := natstest.Connect(t, natstest.Start(t))
	stream, err := pipeline.EnsureStream(ctx, js, pipeline.StreamConfig{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, js, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	acct, err := st.CreateAccount(ctx, "test")
	if err != nil {
		t.Fatal(err)
	}
	key, err := st.CreateAPIKey(ctx, acct.ID, store.APIKeyInput{Description: "test"}, "")
	if err != nil {
		t.Fatal(err)
	}
	prod, err := producer.New(nc, producer.Config{})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	srv, err := api.New(api.Config{}, api.Deps{Keys: st, Publisher: prod, Destinations: st, Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &Stack{URL: hs.URL, Token: key.Token, AccountID: acct.ID, JS: js, Stream: stream, Store: st, Metrics: reg}
}
