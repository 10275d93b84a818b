package store_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/natstest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// auditLog builds audit events for the store, naming each by the change
// and the resource it was given.
type auditLog struct {
	account string
	built   []string
}

// of returns the Audit of change, whose event says the change and the
// resource.
func (a *auditLog) of(change string) store.WriteOption {
	return store.WithAudit(func(resource any) (schemas.Encoded, error) {
		var id string
		switch r := resource.(type) {
		case store.Destination:
			id = r.ID
		case store.Subscription:
			id = r.ID
		case store.APIKey:
			if r.Token != "" {
				return schemas.Encoded{}, errors.New("the audit resource of an API key carries its token")
			}
			id = r.ID
		default:
			return schemas.Encoded{}, fmt.Errorf("unexpected resource %T", resource)
		}
		name := change + " " + id
		a.built = append(a.built, name)
		return schemas.Encoded{ID: schemas.NewID(schemas.PrefixEvent), Type: "api_key_created.v0", AccountID: a.account, Data: []byte(fmt.Sprintf("%q", name))}, nil
	})
}

// pending returns the data of the pending audit events, oldest first.
func (e env) pending(t *testing.T) []string {
	t.Helper()
	pending, err := e.store.Outbox().PendingAudits(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pending {
		names = append(names, strings.Trim(string(p.Event.Data), `"`))
	}
	return names
}

// TestChangesStoreTheirAuditEvents makes every kind of change with an
// audit event: each event waits in the outbox, with the resource after the
// change (before it, for a deletion), until AuditPublished takes it out.
func TestChangesStoreTheirAuditEvents(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "a")
	log := &auditLog{account: account.ID}
	ctx := e.ctx

	d, err := e.store.CreateDestination(ctx, account.ID, kinesisDestination(), log.of("created"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.UpdateDestination(ctx, account.ID, d.ID, func(d *store.Destination) error { d.Description = "x"; return nil }, log.of("updated")); err != nil {
		t.Fatal(err)
	}
	sub, err := e.store.CreateSubscription(ctx, account.ID, store.Subscription{Sources: []store.Source{{Type: httpKind}}, DestinationIDs: []string{d.ID}}, log.of("created"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.UpdateSubscription(ctx, account.ID, sub.ID, func(s *store.Subscription) error { s.Description = "x"; return nil }, log.of("updated")); err != nil {
		t.Fatal(err)
	}
	// A change that changes nothing writes nothing, and no event.
	if _, err := e.store.UpdateSubscription(ctx, account.ID, sub.ID, func(*store.Subscription) error { return nil }, log.of("unchanged")); err != nil {
		t.Fatal(err)
	}
	// A refused change stores no event.
	if _, err := e.store.DeleteDestination(ctx, account.ID, d.ID, log.of("refused")); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("deleting a destination in use: %v", err)
	}
	if _, err := e.store.DeleteSubscription(ctx, account.ID, sub.ID, log.of("deleted")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.DeleteDestination(ctx, account.ID, d.ID, log.of("deleted")); err != nil {
		t.Fatal(err)
	}
	key, err := e.store.CreateAPIKey(ctx, account.ID, store.APIKeyInput{Description: "k"}, "", log.of("created"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.UpdateAPIKey(ctx, account.ID, key.ID, func(k *store.APIKey) error { k.Description = "y"; return nil }, log.of("updated")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateAPIKey(ctx, account.ID, store.APIKeyInput{}, "", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.DeleteAPIKey(ctx, account.ID, key.ID, log.of("deleted")); err != nil {
		t.Fatal(err)
	}

	want := []string{
		"created " + d.ID, "updated " + d.ID, "created " + sub.ID, "updated " + sub.ID,
		"deleted " + sub.ID, "deleted " + d.ID, "created " + key.ID, "updated " + key.ID, "deleted " + key.ID,
	}
	got := e.pending(t)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("pending audit events:\n%s\nwant:\n%s\n(built: %v)", strings.Join(got, "\n"), strings.Join(want, "\n"), log.built)
	}
	pending, err := e.store.Outbox().PendingAudits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pending {
		if err := e.store.Outbox().AuditPublished(ctx, p.Event.ID); err != nil {
			t.Fatal(err)
		}
	}
	// Taking out an event no longer there is no error.
	if err := e.store.Outbox().AuditPublished(ctx, pending[0].Event.ID); err != nil {
		t.Errorf("AuditPublished of an event published already: %v", err)
	}
	if got := e.pending(t); len(got) != 0 {
		t.Errorf("pending audit events after AuditPublished: %v", got)
	}
	for key := range e.rawEntries(t) {
		if strings.HasPrefix(key, "audit_outbox.") {
			t.Errorf("key %s left in the bucket", key)
		}
	}
}

// TestAuditEventOnlyWithItsChange makes changes that fail their
// compare-and-swap, from a writer racing each one, and checks that the
// outbox holds the events of the changes made and no other: the event of
// a write that lost is not stored.
func TestAuditEventOnlyWithItsChange(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "a")
	log := &auditLog{account: account.ID}
	d := e.createDestination(t, account.ID, kinesisDestination())
	other := e.openAnother(t)
	calls := 0
	// The first call of fn changes the destination behind the update's
	// back, so that the update's batch fails its compare-and-swap and the
	// update starts over.
	_, err := e.store.UpdateDestination(e.ctx, account.ID, d.ID, func(d *store.Destination) error {
		calls++
		if calls == 1 {
			if _, err := other.UpdateDestination(e.ctx, account.ID, d.ID, func(d *store.Destination) error { d.Metadata = "race"; return nil }); err != nil {
				return err
			}
		}
		d.Description = fmt.Sprint("call ", calls)
		return nil
	}, log.of("updated"))
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 || len(log.built) != 2 {
		t.Fatalf("fn called %d times, %d events built; want 2 of each", calls, len(log.built))
	}
	if got := e.pending(t); len(got) != 1 || got[0] != "updated "+d.ID {
		t.Errorf("pending audit events: %v; want the one update made", got)
	}
}

// TestOpenTakesAnExistingBucket opens a bucket made before changes were
// written in atomic batches, as an upgrade finds it: its stream gets atomic
// batches, and what it holds is kept.
func TestOpenTakesAnExistingBucket(t *testing.T) {
	ctx := t.Context()
	srv := natstest.Start(t)
	_, js := natstest.Connect(t, srv)
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: store.Bucket, History: 1, Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "accounts.x", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(ctx, js, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(ctx, "KV_"+store.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	if !stream.CachedInfo().Config.AllowAtomicPublish {
		t.Error("the bucket's stream does not take atomic batches")
	}
	if _, err := kv.Get(ctx, "accounts.x"); err != nil {
		t.Errorf("an entry of the bucket is gone: %v", err)
	}
	account, err := s.CreateAccount(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	log := &auditLog{account: account.ID}
	if _, err := s.CreateDestination(ctx, account.ID, kinesisDestination(), log.of("created")); err != nil {
		t.Fatal(err)
	}
	// Opening it again, as every process does, keeps atomic batches on.
	if _, err := store.Open(ctx, js, store.Config{}); err != nil {
		t.Fatal(err)
	}
	if info, err := stream.Info(ctx); err != nil || !info.Config.AllowAtomicPublish {
		t.Errorf("after a second Open: %v, atomic batches %v", err, err == nil && info.Config.AllowAtomicPublish)
	}
}
