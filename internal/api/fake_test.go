package api_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/producer"
	"github.com/sluicehq/sluice/schemas"
)

// fakeKeys is an api.Keys whose answers come from a function.
type fakeKeys struct {
	authenticate func(ctx context.Context, token string) (store.APIKey, error)
}

// Authenticate returns what k.authenticate does.
func (k fakeKeys) Authenticate(ctx context.Context, token string) (store.APIKey, error) {
	return k.authenticate(ctx, token)
}

// fakePublisher is an api.Publisher whose answers come from a function.
type fakePublisher struct {
	publishEncoded func(ctx context.Context, events []schemas.Encoded) []producer.Result
}

// PublishEncoded returns what p.publishEncoded does.
func (p fakePublisher) PublishEncoded(ctx context.Context, events []schemas.Encoded) []producer.Result {
	return p.publishEncoded(ctx, events)
}

// fakeToken is the only API key fakeKeysFor knows.
const fakeToken = "sk_fake_token"

// fakeKeysFor knows fakeToken, a key of the account.
func fakeKeysFor(account string) fakeKeys {
	return fakeKeys{authenticate: func(_ context.Context, token string) (store.APIKey, error) {
		if token != fakeToken {
			return store.APIKey{}, fmt.Errorf("fake keys: %w", store.ErrUnauthenticated)
		}
		return store.APIKey{ID: "ak_fake", AccountID: account}, nil
	}}
}

// storeAll answers as if JetStream stored every event.
func storeAll(_ context.Context, events []schemas.Encoded) []producer.Result {
	results := make([]producer.Result, len(events))
	for i, ev := range events {
		results[i] = producer.Result{EventID: ev.ID}
	}
	return results
}

// counterValue returns the value of the counter name whose label has the
// value, or 0 when there is none.
func counterValue(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
