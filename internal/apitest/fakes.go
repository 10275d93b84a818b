package apitest

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/producer"
	"github.com/sluicehq/sluice/schemas"
)

// FakeKeys is an apiconv.Keys whose answers come from a function, for the
// unit tests of the API's handlers without NATS.
type FakeKeys struct {
	Auth func(ctx context.Context, token string) (store.APIKey, error)
}

// Authenticate returns what k.Auth does.
func (k FakeKeys) Authenticate(ctx context.Context, token string) (store.APIKey, error) {
	return k.Auth(ctx, token)
}

// FakePublisher is an api.Publisher whose answers come from a function.
type FakePublisher struct {
	Publish func(ctx context.Context, events []schemas.Encoded) []producer.Result
}

// PublishEncoded returns what p.Publish does.
func (p FakePublisher) PublishEncoded(ctx context.Context, events []schemas.Encoded) []producer.Result {
	return p.Publish(ctx, events)
}

// FakeToken is the only API key FakeKeysFor knows.
const FakeToken = "sk_fake_token"

// FakeKeysFor knows FakeToken, a key of the account.
func FakeKeysFor(account string) FakeKeys {
	return FakeKeys{Auth: func(_ context.Context, token string) (store.APIKey, error) {
		if token != FakeToken {
			return store.APIKey{}, fmt.Errorf("fake keys: %w", store.ErrUnauthenticated)
		}
		return store.APIKey{ID: "ak_fake", AccountID: account}, nil
	}}
}

// StoreAll answers as if JetStream stored every event.
func StoreAll(_ context.Context, events []schemas.Encoded) []producer.Result {
	results := make([]producer.Result, len(events))
	for i, ev := range events {
		results[i] = producer.Result{EventID: ev.ID}
	}
	return results
}

// CounterValue returns the value of the counter name whose label has the
// value, or 0 when there is none.
func CounterValue(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
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
