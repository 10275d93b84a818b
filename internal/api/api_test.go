package api_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/store"
)

// testEnv is a sluice API on a real in-process NATS server.
type testEnv struct {
	url     string
	client  *http.Client // checks every exchange against docs/openapi.yaml
	token   string
	account string
	stream  jetstream.Stream
	js      jetstream.JetStream
	reg     *prometheus.Registry
	store   *store.Store // nil in a fake env
	keyID   string       // the id of token's key
	logs    *apitest.Logs
	server  *api.Server // nil in a fake env
}

func newTestEnv(t *testing.T, opts ...apitest.Option) *testEnv {
	t.Helper()
	return envOf(t, apitest.Start(t, opts...))
}

// envOf is the testEnv of a running stack.
func envOf(t *testing.T, st *apitest.Stack) *testEnv {
	t.Helper()
	return &testEnv{url: st.URL, client: apitest.DocumentedClient(t, "../../docs/openapi.yaml"), token: st.Token, account: st.AccountID,
		stream: st.Stream, js: st.JS, reg: st.Metrics, store: st.Store, keyID: st.KeyID, logs: st.Logs, server: st.API}
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

// do sends a request with the key's token and Service-Version: 2, changed
// by edit, through the client that checks it against docs/openapi.yaml, and
// returns the response with its body read.
func (e *testEnv) do(t *testing.T, method, path, token string, body io.Reader, edit func(*http.Request)) (*http.Response, []byte) {
	t.Helper()
	return apitest.Do(t, e.client, e.url, method, path, token, body, edit)
}
