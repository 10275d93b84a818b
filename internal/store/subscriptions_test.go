package store_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/filters"
	"github.com/sluicehq/sluice/internal/natstest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

const (
	httpKind  = "http_request_complete.v0"
	tcpKind   = "tcp_connection_closed.v0"
	auditKind = "event_destination_created.v0"
)

func (e env) createSubscription(t *testing.T, accountID string, in store.Subscription) store.Subscription {
	t.Helper()
	sub, err := e.store.CreateSubscription(e.ctx, accountID, in)
	if err != nil {
		t.Fatalf("CreateSubscription: %v", err)
	}
	return sub
}

// zeros is a CEL list of n zeros.
func zeros(n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat("0,", n), ",") + "]"
}

func TestCreateSubscriptionValidation(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "acme")
	other := e.createAccount(t, "other")
	dest := e.createDestination(t, account.ID, kinesisDestination())
	otherDest := e.createDestination(t, other.ID, kinesisDestination())
	sources := func(s ...store.Source) func(*store.Subscription) {
		return func(sub *store.Subscription) { sub.Sources = s }
	}
	tests := []struct {
		name      string
		change    func(*store.Subscription)
		wantField string // "" for a valid subscription
		wantErr   error  // also matched, besides ErrInvalid
	}{
		{name: "valid", change: func(*store.Subscription) {}},
		{name: "no sources nor destinations", change: func(sub *store.Subscription) { sub.Sources, sub.DestinationIDs = nil, nil }},
		{name: "longest description in characters", change: func(sub *store.Subscription) { sub.Description = strings.Repeat("é", 255) }},
		{name: "description over 255 characters", change: func(sub *store.Subscription) { sub.Description = strings.Repeat("d", 256) }, wantField: "description"},
		{name: "description not utf-8", change: func(sub *store.Subscription) { sub.Description = "\xff" }, wantField: "description"},
		{name: "longest metadata in characters", change: func(sub *store.Subscription) { sub.Metadata = strings.Repeat("é", 4096) }},
		{name: "metadata over 4096 characters", change: func(sub *store.Subscription) { sub.Metadata = strings.Repeat("m", 4097) }, wantField: "metadata"},
		{name: "source without type", change: sources(store.Source{}), wantField: "sources[0].type"},
		{name: "unknown kind", change: sources(store.Source{Type: httpKind}, store.Source{Type: "http_request_completed.v0"}), wantField: "sources[1].type"},
		{name: "duplicate kind", change: sources(store.Source{Type: tcpKind}, store.Source{Type: httpKind}, store.Source{Type: tcpKind}), wantField: "sources[2].type"},
		{name: "audit kind", change: sources(store.Source{Type: auditKind})},
		{name: "filter on an audit kind", change: sources(store.Source{Type: auditKind, Filter: "true"}),
			wantField: "sources[0].filter", wantErr: filters.ErrNotTraffic},
		{name: "fields on an audit kind", change: sources(store.Source{Type: auditKind, Fields: []string{"id"}}),
			wantField: "sources[0].fields", wantErr: filters.ErrNotTraffic},
		{name: "filter and fields", change: sources(store.Source{Type: tcpKind, Filter: `inCIDR(ev.conn.client_ip, "10.0.0.0/8")`, Fields: []string{"conn"}})},
		{name: "filter not boolean", change: sources(store.Source{Type: httpKind, Filter: "ev.conn.server_port"}),
			wantField: "sources[0].filter", wantErr: filters.ErrNotBoolean},
		{name: "filter on a field not filterable", change: sources(store.Source{Type: httpKind, Filter: `ev.http.request.method == "GET"`}),
			wantField: "sources[0].filter", wantErr: filters.ErrInvalidFilter},
		{name: "filter that does not parse", change: sources(store.Source{Type: httpKind, Filter: "ev.conn.server_port =="}),
			wantField: "sources[0].filter", wantErr: filters.ErrInvalidFilter},
		{name: "filter of blanks", change: sources(store.Source{Type: httpKind, Filter: "  "}),
			wantField: "sources[0].filter", wantErr: filters.ErrEmptyFilter},
		{name: "filter too costly", change: sources(store.Source{Type: httpKind, Filter: zeros(1000) + ".all(x, " + zeros(1000) + ".all(y, x == y))"}),
			wantField: "sources[0].filter", wantErr: filters.ErrFilterTooCostly},
		{name: "unknown field", change: sources(store.Source{Type: httpKind, Fields: []string{"conn.client_ip", "conn.client"}}),
			wantField: "sources[0].fields[1]", wantErr: filters.ErrInvalidField},
		{name: "field selected twice", change: sources(store.Source{Type: httpKind, Fields: []string{"conn", "http", "conn"}}),
			wantField: "sources[0].fields[2]", wantErr: filters.ErrInvalidField},
		{name: "malformed destination id", change: func(sub *store.Subscription) { sub.DestinationIDs = []string{"ed_*"} },
			wantField: "destination_ids[0]", wantErr: store.ErrNotFound},
		{name: "unknown destination", change: func(sub *store.Subscription) {
			sub.DestinationIDs = []string{dest.ID, schemas.NewID(schemas.PrefixDestination)}
		}, wantField: "destination_ids[1]", wantErr: store.ErrNotFound},
		{name: "destination of another account", change: func(sub *store.Subscription) { sub.DestinationIDs = []string{otherDest.ID} },
			wantField: "destination_ids[0]", wantErr: store.ErrNotFound},
		{name: "duplicate destination", change: func(sub *store.Subscription) { sub.DestinationIDs = []string{dest.ID, dest.ID} },
			wantField: "destination_ids[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := store.Subscription{
				Description:    "all traffic",
				Sources:        []store.Source{{Type: httpKind, Filter: "ev.conn.server_port == 443"}},
				DestinationIDs: []string{dest.ID},
			}
			tt.change(&in)
			sub, err := e.store.CreateSubscription(e.ctx, account.ID, in)
			if tt.wantField != "" {
				wantInvalid(t, err, tt.wantField)
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Fatalf("error = %v, want one matching %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("CreateSubscription: %v", err)
			}
			got, err := e.store.GetSubscription(e.ctx, account.ID, sub.ID)
			if err != nil {
				t.Fatalf("GetSubscription: %v", err)
			}
			wantSameJSON(t, got, sub)
		})
	}
}

func TestUnknownKindSuggestsCloseNames(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "acme")
	_, err := e.store.CreateSubscription(e.ctx, account.ID, store.Subscription{
		Sources: []store.Source{{Type: "http_request_complete"}},
	})
	invalid := wantInvalid(t, err, "sources[0].type")
	if !strings.Contains(invalid.Msg, `"http_request_complete.v0"`) {
		t.Fatalf("message %q does not suggest http_request_complete.v0", invalid.Msg)
	}
}

func TestSubscriptionRoundTrip(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "acme")
	first := e.createDestination(t, account.ID, kinesisDestination())
	second := e.createDestination(t, account.ID, credsDestination())
	in := store.Subscription{
		Description: "edge traffic",
		Metadata:    "{}",
		Sources: []store.Source{
			{Type: httpKind, Filter: "ev.conn.server_port == 443", Fields: []string{"http.request.method", "conn.client_ip", "conn"}},
			{Type: auditKind},
		},
		DestinationIDs: []string{first.ID},
	}
	sub := e.createSubscription(t, account.ID, in)
	if err := schemas.CheckID(schemas.PrefixSubscription, sub.ID); err != nil {
		t.Fatalf("subscription id: %v", err)
	}
	if sub.AccountID != account.ID || sub.CreatedAt.IsZero() {
		t.Fatalf("subscription = %+v", sub)
	}
	src, ok := sub.Source(httpKind)
	if !ok || !slices.Equal(src.Fields, []string{"conn", "http.request.method"}) {
		t.Fatalf("source %s = %+v, want its fields normalized", httpKind, src)
	}
	if _, ok := sub.Source(tcpKind); ok {
		t.Fatalf("Source(%s) found a source the subscription does not have", tcpKind)
	}
	got, err := e.store.GetSubscription(e.ctx, account.ID, sub.ID)
	if err != nil {
		t.Fatalf("GetSubscription: %v", err)
	}
	wantSameJSON(t, got, sub)

	updated, err := e.store.UpdateSubscription(e.ctx, account.ID, sub.ID, func(sub *store.Subscription) error {
		sub.Sources = append(sub.Sources, store.Source{Type: tcpKind})
		sub.DestinationIDs = append(sub.DestinationIDs, second.ID)
		return nil
	})
	if err != nil {
		t.Fatalf("UpdateSubscription: %v", err)
	}
	if len(updated.Sources) != 3 || !slices.Equal(updated.DestinationIDs, []string{first.ID, second.ID}) {
		t.Fatalf("updated subscription = %+v", updated)
	}
	got, err = e.store.GetSubscription(e.ctx, account.ID, sub.ID)
	if err != nil {
		t.Fatalf("GetSubscription after update: %v", err)
	}
	wantSameJSON(t, got, updated)

	_, err = e.store.UpdateSubscription(e.ctx, account.ID, sub.ID, func(sub *store.Subscription) error {
		sub.Sources = append(sub.Sources, store.Source{Type: tcpKind})
		return nil
	})
	wantInvalid(t, err, "sources[3].type")

	if _, err := e.store.DeleteSubscription(e.ctx, account.ID, sub.ID); err != nil {
		t.Fatalf("DeleteSubscription: %v", err)
	}
	_, err = e.store.GetSubscription(e.ctx, account.ID, sub.ID)
	wantErr(t, err, store.ErrNotFound)
	wantErr(t, errOf(e.store.DeleteSubscription(e.ctx, account.ID, sub.ID)), store.ErrNotFound)
}

func TestSubscriptionWithGivenFilters(t *testing.T) {
	e := newEnv(t)
	env, err := filters.NewEnv(schemas.Default())
	if err != nil {
		t.Fatalf("NewEnv: %v", err)
	}
	_, js := natstest.Connect(t, e.srv)
	s, err := store.Open(e.ctx, js, store.Config{}, store.WithFilters(env))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	account := e.createAccount(t, "acme")
	_, err = s.CreateSubscription(e.ctx, account.ID, store.Subscription{
		Sources: []store.Source{{Type: tcpKind, Filter: "ev.conn.server_port"}},
	})
	wantInvalid(t, err, "sources[0].filter")
	if _, err := s.CreateSubscription(e.ctx, account.ID, store.Subscription{
		Sources: []store.Source{{Type: tcpKind, Filter: "ev.conn.server_port == 22"}},
	}); err != nil {
		t.Fatalf("CreateSubscription: %v", err)
	}
}

func TestDeleteDestinationInUse(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "acme")
	used := e.createDestination(t, account.ID, kinesisDestination())
	unused := e.createDestination(t, account.ID, kinesisDestination())
	first := e.createSubscription(t, account.ID, store.Subscription{Sources: []store.Source{{Type: httpKind}}, DestinationIDs: []string{used.ID}})
	second := e.createSubscription(t, account.ID, store.Subscription{DestinationIDs: []string{unused.ID, used.ID}})

	_, err := e.store.DeleteDestination(e.ctx, account.ID, used.ID)
	var inUse *store.InUseError
	if !errors.As(err, &inUse) || !errors.Is(err, store.ErrConflict) {
		t.Fatalf("DeleteDestination of a used destination: error = %v, want an *InUseError matching ErrConflict", err)
	}
	want := []string{first.ID, second.ID}
	slices.Sort(want)
	if inUse.DestinationID != used.ID || !slices.Equal(inUse.Subscriptions, want) {
		t.Fatalf("InUseError = %+v, want destination %s used by %v", inUse, used.ID, want)
	}
	if !strings.Contains(err.Error(), first.ID) {
		t.Fatalf("error %q does not name the subscription", err)
	}

	if _, err := e.store.DeleteSubscription(e.ctx, account.ID, first.ID); err != nil {
		t.Fatalf("DeleteSubscription: %v", err)
	}
	if _, err := e.store.UpdateSubscription(e.ctx, account.ID, second.ID, func(sub *store.Subscription) error {
		sub.DestinationIDs = []string{unused.ID}
		return nil
	}); err != nil {
		t.Fatalf("UpdateSubscription: %v", err)
	}
	if _, err := e.store.DeleteDestination(e.ctx, account.ID, used.ID); err != nil {
		t.Fatalf("DeleteDestination once unused: %v", err)
	}
	_, err = e.store.GetDestination(e.ctx, account.ID, used.ID)
	wantErr(t, err, store.ErrNotFound)
}

// TestDeleteDestinationWhileSubscribing races deletes of destinations with
// subscriptions naming them: in the end no subscription may name a
// destination that does not exist.
func TestDeleteDestinationWhileSubscribing(t *testing.T) {
	const rounds = 20
	e := newEnv(t)
	account := e.createAccount(t, "acme")
	for range rounds {
		dest := e.createDestination(t, account.ID, kinesisDestination())
		target := e.createSubscription(t, account.ID, store.Subscription{})
		created := make(chan error, 1)
		updated := make(chan error, 1)
		deleted := make(chan error, 1)
		go func() {
			_, err := e.store.CreateSubscription(e.ctx, account.ID, store.Subscription{DestinationIDs: []string{dest.ID}})
			created <- err
		}()
		go func() {
			_, err := e.store.UpdateSubscription(e.ctx, account.ID, target.ID, func(sub *store.Subscription) error {
				sub.DestinationIDs = []string{dest.ID}
				return nil
			})
			updated <- err
		}()
		go func() { deleted <- errOf(e.store.DeleteDestination(e.ctx, account.ID, dest.ID)) }()
		for _, ch := range []chan error{created, updated, deleted} {
			if err := <-ch; err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrConflict) {
				t.Fatalf("unexpected error: %v", err)
			}
		}
		wantNoDanglingDestinations(t, e, account.ID)
	}
}

// wantNoDanglingDestinations fails the test if a subscription of the
// account names a destination that does not exist.
func wantNoDanglingDestinations(t *testing.T, e env, accountID string) {
	t.Helper()
	subs, _, err := e.store.ListSubscriptions(e.ctx, accountID, store.Page{})
	if err != nil {
		t.Fatalf("ListSubscriptions: %v", err)
	}
	for _, sub := range subs {
		for _, id := range sub.DestinationIDs {
			if _, err := e.store.GetDestination(e.ctx, accountID, id); err != nil {
				t.Fatalf("subscription %s names destination %s: %v", sub.ID, id, err)
			}
		}
	}
}
