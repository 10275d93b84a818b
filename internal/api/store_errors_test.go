package api_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/store"
)

// failingStore is a store of destinations, subscriptions and API keys
// every call of which returns err.
type failingStore struct{ err error }

func (f failingStore) CreateDestination(context.Context, string, store.Destination, ...store.WriteOption) (store.Destination, error) {
	return store.Destination{}, f.err
}

func (f failingStore) GetDestination(context.Context, string, string) (store.Destination, error) {
	return store.Destination{}, f.err
}

func (f failingStore) ListDestinations(context.Context, string, store.Page) ([]store.Destination, string, error) {
	return nil, "", f.err
}

func (f failingStore) UpdateDestination(context.Context, string, string, func(*store.Destination) error, ...store.WriteOption) (store.Destination, error) {
	return store.Destination{}, f.err
}

func (f failingStore) DeleteDestination(context.Context, string, string, ...store.WriteOption) (store.Destination, error) {
	return store.Destination{}, f.err
}

func (f failingStore) CreateSubscription(context.Context, string, store.Subscription, ...store.WriteOption) (store.Subscription, error) {
	return store.Subscription{}, f.err
}

func (f failingStore) GetSubscription(context.Context, string, string) (store.Subscription, error) {
	return store.Subscription{}, f.err
}

func (f failingStore) ListSubscriptions(context.Context, string, store.Page) ([]store.Subscription, string, error) {
	return nil, "", f.err
}

func (f failingStore) UpdateSubscription(context.Context, string, string, func(*store.Subscription) error, ...store.WriteOption) (store.Subscription, error) {
	return store.Subscription{}, f.err
}

func (f failingStore) DeleteSubscription(context.Context, string, string, ...store.WriteOption) (store.Subscription, error) {
	return store.Subscription{}, f.err
}

func (f failingStore) CreateAPIKey(context.Context, string, store.APIKeyInput, string, ...store.WriteOption) (store.APIKey, error) {
	return store.APIKey{}, f.err
}

func (f failingStore) GetAPIKey(context.Context, string, string) (store.APIKey, error) {
	return store.APIKey{}, f.err
}

func (f failingStore) ListAPIKeys(context.Context, string, store.Page) ([]store.APIKey, string, error) {
	return nil, "", f.err
}

func (f failingStore) UpdateAPIKey(context.Context, string, string, func(*store.APIKey) error, ...store.WriteOption) (store.APIKey, error) {
	return store.APIKey{}, f.err
}

func (f failingStore) DeleteAPIKey(context.Context, string, string, ...store.WriteOption) (store.APIKey, error) {
	return store.APIKey{}, f.err
}

// TestStoreErrors answers every management call whose store fails: 503
// ERR_SLUICE_104 with Retry-After, logged with the operation id, when the
// store is unreachable; 409 ERR_SLUICE_422 when the resource kept changing
// under concurrent writes, which any write of a subscription can meet (its
// destinations are rewritten when it starts naming them).
func TestStoreErrors(t *testing.T) {
	const (
		account = "ac_2ZVXCKvrcw0TxPDk1JLmC8b3eBQ"
		subID   = "esb_2ZVXCKvrcw0TxPDk1JLmC8b3eBQ"
	)
	unreachable := fmt.Errorf("reading the store: %w", errors.New("nats: timeout"))
	conflict := fmt.Errorf("updating subscription %s: %w", subID, store.ErrConflict)
	tests := []struct {
		name            string
		err             error
		status          int
		code            string
		only            func(method, path string) bool // the calls that can meet err; nil: all
		retryAfter, log bool
	}{
		{"unreachable", unreachable, http.StatusServiceUnavailable, "ERR_SLUICE_104", nil, true, true},
		{"conflict", conflict, http.StatusConflict, "ERR_SLUICE_422", func(method, path string) bool {
			return method == http.MethodPatch || method == http.MethodDelete || (method == http.MethodPost && strings.HasPrefix(path, "/event_subscriptions"))
		}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &apitest.Logs{}
			fail := failingStore{err: tt.err}
			srv, err := api.New(api.Config{BaseURL: "http://sluice.test"}, api.Deps{
				Keys:          apitest.FakeKeysFor(account),
				Publisher:     apitest.FakePublisher{Publish: apitest.StoreAll},
				Destinations:  fail,
				Subscriptions: fail,
				APIKeys:       fail,
				Logger:        slog.New(slog.NewJSONHandler(logs, nil)),
			})
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(srv)
			t.Cleanup(hs.Close)
			e := &testEnv{url: hs.URL, client: apitest.DocumentedClient(t, "../../docs/openapi.yaml"), token: apitest.FakeToken}
			for _, c := range []managementCall{
				{http.MethodPost, "/event_destinations", credsBody},
				{http.MethodGet, "/event_destinations", ""},
				{http.MethodGet, "/event_destinations/ed_2ZVXCKvrcw0TxPDk1JLmC8b3eBQ", ""},
				{http.MethodPatch, "/event_destinations/ed_2ZVXCKvrcw0TxPDk1JLmC8b3eBQ", credsBody},
				{http.MethodDelete, "/event_destinations/ed_2ZVXCKvrcw0TxPDk1JLmC8b3eBQ", ""},
				{http.MethodPost, "/event_subscriptions", `{"description":"d"}`},
				{http.MethodGet, "/event_subscriptions", ""},
				{http.MethodGet, "/event_subscriptions/" + subID, ""},
				{http.MethodPatch, "/event_subscriptions/" + subID, `{"description":"d"}`},
				{http.MethodDelete, "/event_subscriptions/" + subID, ""},
				{http.MethodPost, "/event_subscriptions/" + subID + "/sources", `{"type":"` + tcpKind + `"}`},
				{http.MethodGet, "/event_subscriptions/" + subID + "/sources", ""},
				{http.MethodGet, "/event_subscriptions/" + subID + "/sources/" + tcpKind, ""},
				{http.MethodPatch, "/event_subscriptions/" + subID + "/sources/" + tcpKind, `{"filter":"true"}`},
				{http.MethodDelete, "/event_subscriptions/" + subID + "/sources/" + tcpKind, ""},
				{http.MethodPost, "/api_keys", `{"description":"d"}`},
				{http.MethodGet, "/api_keys", ""},
				{http.MethodGet, "/api_keys/ak_2ZVXCKvrcw0TxPDk1JLmC8b3eBQ", ""},
				{http.MethodPatch, "/api_keys/ak_2ZVXCKvrcw0TxPDk1JLmC8b3eBQ", `{"description":"d"}`},
				{http.MethodDelete, "/api_keys/ak_2ZVXCKvrcw0TxPDk1JLmC8b3eBQ", ""},
			} {
				if tt.only != nil && !tt.only(c.method, c.path) {
					continue
				}
				resp, out := e.call(t, e.token, c.method, c.path, c.body)
				wantError(t, resp, out, tt.status, tt.code, "")
				if got := resp.Header.Get("Retry-After"); (got != "") != tt.retryAfter {
					t.Errorf("%s %s: Retry-After %q", c.method, c.path, got)
				}
				op := resp.Header.Get(apiconv.HeaderOperationID)
				if logged := strings.Contains(logs.String(), op); logged != tt.log {
					t.Errorf("%s %s: operation %s logged: %v, want %v", c.method, c.path, op, logged, tt.log)
				}
			}
			if strings.Contains(logs.String(), testSecret) {
				t.Errorf("the logs show the secret:\n%s", logs)
			}
		})
	}
}
