package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/producer"
	"github.com/sluicehq/sluice/schemas"
)

// auditEvent is an audit event as stored in the stream.
type auditEvent struct {
	ID        string `json:"event_id"`
	Type      string `json:"event_type"`
	Timestamp string `json:"event_timestamp"`
	AccountID string `json:"account_id"`
	Principal struct {
		ID         string `json:"id"`
		Subject    string `json:"subject"`
		Source     string `json:"source"`
		Credential struct {
			ID  string `json:"id"`
			URI string `json:"uri"`
		} `json:"credential"`
	} `json:"principal"`
	Object json.RawMessage `json:"object"`
	raw    string
}

// storedEvents returns every event of the account in the stream, in the
// order stored.
func (e *testEnv) storedEvents(t *testing.T, account string) []auditEvent {
	t.Helper()
	var events []auditEvent
	for _, data := range apitest.StoredEvents(t, e.stream, account) {
		var ev auditEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			t.Fatalf("stored event %s: %v", data, err)
		}
		ev.raw = string(data)
		events = append(events, ev)
	}
	return events
}

// TestAuditEvents makes every kind of change and reads back its audit
// event: the resource after the change (before it, for a delete), the key
// that made it, and no secret.
func TestAuditEvents(t *testing.T) {
	e := newTestEnv(t)
	type change struct {
		kind, id string
		check    func(t *testing.T, object string)
	}
	var changes []change
	expect := func(kind, id string, check func(t *testing.T, object string)) {
		changes = append(changes, change{kind, id, check})
	}
	has := func(parts ...string) func(t *testing.T, object string) {
		return func(t *testing.T, object string) {
			t.Helper()
			for _, p := range parts {
				if !strings.Contains(object, p) {
					t.Errorf("object %s does not hold %s", object, p)
				}
			}
		}
	}

	dest := e.create(t, credsBody)
	nullSecret := `"creds":{"aws_access_key_id":"` + testKeyID + `","aws_secret_access_key":null}`
	expect("event_destination_created.v0", dest.ID, has(`"uri":"`+dest.URI+`"`, nullSecret, `"format":"json"`))
	resp, out := e.call(t, e.token, http.MethodPatch, "/event_destinations/"+dest.ID, `{"description":"renamed"}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	expect("event_destination_updated.v0", dest.ID, has(`"description":"renamed"`, nullSecret))

	sub := e.createSubscription(t, `{"sources":[{"type":"`+httpKind+`"}],"destination_ids":["`+dest.ID+`"]}`)
	expect("event_subscription_created.v0", sub.ID, has(`"destinations":[{"id":"`+dest.ID+`","uri":"`+dest.URI+`"}]`, `"uri":"`+sub.URI+`/sources/`+httpKind+`"`))
	resp, out = e.call(t, e.token, http.MethodPost, "/event_subscriptions/"+sub.ID+"/sources", `{"type":"`+tcpKind+`","filter":"ev.conn.server_port == 22"}`)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	expect("event_subscription_updated.v0", sub.ID, has(`"filter":"ev.conn.server_port == 22"`))
	resp, out = e.call(t, e.token, http.MethodPatch, "/event_subscriptions/"+sub.ID+"/sources/"+tcpKind, `{"fields":["conn.server_port"]}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	expect("event_subscription_updated.v0", sub.ID, has(`"fields":["conn.server_port"]`))
	resp, out = e.call(t, e.token, http.MethodDelete, "/event_subscriptions/"+sub.ID+"/sources/"+tcpKind, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
	expect("event_subscription_updated.v0", sub.ID, nil)
	resp, out = e.call(t, e.token, http.MethodPatch, "/event_subscriptions/"+sub.ID, `{"metadata":"m"}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	expect("event_subscription_updated.v0", sub.ID, has(`"metadata":"m"`))
	resp, out = e.call(t, e.token, http.MethodDelete, "/event_subscriptions/"+sub.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
	expect("event_subscription_deleted.v0", sub.ID, has(`"metadata":"m"`, `"type":"`+httpKind+`"`))
	resp, out = e.call(t, e.token, http.MethodDelete, "/event_destinations/"+dest.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
	expect("event_destination_deleted.v0", dest.ID, has(`"description":"renamed"`, nullSecret))

	key := e.createKey(t, `{"description":"ci"}`)
	expect("api_key_created.v0", key.ID, has(`"token":null`, `"description":"ci"`))
	resp, out = e.call(t, e.token, http.MethodPatch, "/api_keys/"+key.ID, `{"metadata":"m"}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	expect("api_key_updated.v0", key.ID, has(`"token":null`, `"metadata":"m"`))
	resp, out = e.call(t, e.token, http.MethodDelete, "/api_keys/"+key.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
	expect("api_key_deleted.v0", key.ID, has(`"token":null`, `"metadata":"m"`))

	// Calls that change nothing have no event.
	resp, out = e.call(t, e.token, http.MethodGet, "/event_subscriptions", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	resp, out = e.call(t, e.token, http.MethodPost, "/event_subscriptions", `{"sources":[{"type":"nope.v0"}]}`)
	apitest.WantStatus(t, resp, out, http.StatusBadRequest)

	events := e.storedEvents(t, e.account)
	if len(events) != len(changes) {
		t.Fatalf("%d events stored for %d changes", len(events), len(changes))
	}
	for i, ev := range events {
		want := changes[i]
		t.Run(fmt.Sprintf("%d %s", i, want.kind), func(t *testing.T) {
			var object struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(ev.Object, &object); err != nil {
				t.Fatal(err)
			}
			if ev.Type != want.kind || object.ID != want.id || ev.AccountID != e.account || schemas.CheckID(schemas.PrefixEvent, ev.ID) != nil {
				t.Fatalf("event %s: want %s of %s", ev.raw, want.kind, want.id)
			}
			p := ev.Principal
			if p.ID != e.keyID || p.Subject != "test" || p.Source != "API" || p.Credential.ID != e.keyID || p.Credential.URI != e.url+"/api_keys/"+e.keyID {
				t.Errorf("principal %+v, want the key %s", p, e.keyID)
			}
			if strings.Contains(ev.raw, testSecret) || strings.Contains(ev.raw, *key.Token) || strings.Contains(ev.raw, e.token) {
				t.Errorf("event shows a secret: %s", ev.raw)
			}
			if want.check != nil {
				want.check(t, string(ev.Object))
			}
		})
	}
	if got := apitest.CounterValue(t, e.reg, "sluice_audit_events_total", "event_type", "event_subscription_updated.v0"); got != 4 {
		t.Errorf("sluice_audit_events_total{event_type=event_subscription_updated.v0} = %v, want 4", got)
	}
	if logs := e.logs.String(); strings.Contains(logs, testSecret) || strings.Contains(logs, *key.Token) {
		t.Errorf("the logs show a secret:\n%s", logs)
	}
}

// failingPublisher stores nothing.
type failingPublisher struct{}

func (failingPublisher) PublishEncoded(_ context.Context, events []schemas.Encoded) []producer.Result {
	results := make([]producer.Result, len(events))
	for i, ev := range events {
		results[i] = producer.Result{EventID: ev.ID, Err: fmt.Errorf("%w: no JetStream", producer.ErrNotStored)}
	}
	return results
}

// TestAuditEventNotLost makes a change while the events stream refuses
// the audit event: the change is made and answered at once, its event
// waits in the store's outbox, and another process's relay publishes it
// once this one has gone (as if it died right after answering). A change
// that is refused stores no event either.
func TestAuditEventNotLost(t *testing.T) {
	first := apitest.Start(t, apitest.WithPublisher(func(api.Publisher) api.Publisher { return failingPublisher{} }))
	e := envOf(t, first)
	start := time.Now()
	d := e.create(t, credsBody)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the create took %v", took)
	}
	if _, err := e.store.GetDestination(t.Context(), e.account, d.ID); err != nil {
		t.Fatalf("the destination was not kept: %v", err)
	}
	if events := e.storedEvents(t, e.account); len(events) != 0 {
		t.Fatalf("events stored while the stream refuses them: %+v", events)
	}
	if got := apitest.CounterValue(t, e.reg, "sluice_audit_events_failed_total", "event_type", "event_destination_created.v0"); got != 1 {
		t.Errorf("sluice_audit_events_failed_total = %v, want 1", got)
	}
	if logs := e.logs.String(); !strings.Contains(logs, "audit event left in the outbox") || strings.Contains(logs, testSecret) {
		t.Errorf("the pending event is not logged, or the log shows the secret:\n%s", logs)
	}
	// Refused changes leave nothing behind.
	resp, out := e.call(t, e.token, http.MethodPatch, "/event_destinations/"+d.ID, `{"target":{"kinesis":{"stream_arn":"arn:aws:kinesis:us-east-1:123456789012:stream/s","auth":{"role":{"role_arn":"arn:aws:iam::123456789012:role/r"}}}}}`)
	apitest.WantStatus(t, resp, out, http.StatusBadRequest)

	second := first.Another(t)
	ctx := t.Context()
	pending, err := second.Store.Outbox().PendingAudits(ctx)
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending audit events: %+v, %v; want the one of the create", pending, err)
	}
	prod, err := producer.New(second.JS.Conn(), producer.Config{})
	if err != nil {
		t.Fatal(err)
	}
	relay, err := api.NewAuditRelay(second.Store.Outbox(), prod, api.AuditRelayConfig{Grace: time.Nanosecond}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := relay.Relay(ctx); err != nil {
		t.Fatal(err)
	}
	events := e.storedEvents(t, e.account)
	if len(events) != 1 || events[0].Type != "event_destination_created.v0" || events[0].ID != pending[0].Event.ID || !strings.Contains(string(events[0].Object), d.ID) {
		t.Fatalf("stored events after the relay: %+v; want the create of %s", events, d.ID)
	}
	if strings.Contains(events[0].raw, testSecret) {
		t.Errorf("the event shows the secret: %s", events[0].raw)
	}
	if pending, err := second.Store.Outbox().PendingAudits(ctx); err != nil || len(pending) != 0 {
		t.Errorf("pending audit events after the relay: %+v, %v", pending, err)
	}
	// A second pass, or another relay, publishes nothing again.
	if err := relay.Relay(ctx); err != nil {
		t.Fatal(err)
	}
	if events := e.storedEvents(t, e.account); len(events) != 1 {
		t.Errorf("%d events after a second pass, want 1", len(events))
	}
}

// TestAuditPrincipalIsTheKeyUsed makes changes with several keys of one
// account: each event's principal is the key that made its change, even a
// key deleting itself, and a key without a description is its own subject.
func TestAuditPrincipalIsTheKeyUsed(t *testing.T) {
	e := newTestEnv(t)
	bot := e.createKey(t, `{"description":"ci bot"}`)
	nameless := e.createKey(t, `{}`)
	skip := len(e.storedEvents(t, e.account)) // the two api_key_created.v0, by the test's key

	type change struct{ token, keyID, subject, kind string }
	changes := []change{
		{*bot.Token, bot.ID, "ci bot", "event_destination_created.v0"},
		{*nameless.Token, nameless.ID, nameless.ID, "event_subscription_created.v0"},
		{*bot.Token, bot.ID, "ci bot", "event_subscription_updated.v0"},
		{*nameless.Token, nameless.ID, nameless.ID, "api_key_updated.v0"},
		{*bot.Token, bot.ID, "ci bot", "api_key_deleted.v0"},
	}
	resp, out := e.call(t, *bot.Token, http.MethodPost, "/event_destinations", kinesisBody)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	resp, out = e.call(t, *nameless.Token, http.MethodPost, "/event_subscriptions", `{}`)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	sub := apitest.DecodeAs[subscription](t, out)
	resp, out = e.call(t, *bot.Token, http.MethodPost, "/event_subscriptions/"+sub.ID+"/sources", `{"type":"`+tcpKind+`"}`)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	resp, out = e.call(t, *nameless.Token, http.MethodPatch, "/api_keys/"+bot.ID, `{"metadata":"m"}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	resp, out = e.call(t, *bot.Token, http.MethodDelete, "/api_keys/"+bot.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)

	events := e.storedEvents(t, e.account)[skip:]
	if len(events) != len(changes) {
		t.Fatalf("%d events for %d changes", len(events), len(changes))
	}
	for i, ev := range events {
		want := changes[i]
		p := ev.Principal
		if ev.Type != want.kind || p.ID != want.keyID || p.Subject != want.subject || p.Source != "API" ||
			p.Credential.ID != want.keyID || p.Credential.URI != e.url+"/api_keys/"+want.keyID {
			t.Errorf("event %d: %s by %+v, want %s by %s (%s)", i, ev.Type, p, want.kind, want.keyID, want.subject)
		}
		if strings.Contains(ev.raw, want.token) || strings.Contains(ev.raw, e.token) {
			t.Errorf("event %d shows a token: %s", i, ev.raw)
		}
	}
}

// TestAuditNoChangeNoEvent: a PATCH that changes nothing writes nothing,
// so it has no audit event to publish: none is published, and none is
// counted or logged as failed.
func TestAuditNoChangeNoEvent(t *testing.T) {
	e := newTestEnv(t)
	dest := e.create(t, credsBody)
	for range 2 {
		resp, out := e.call(t, e.token, http.MethodPatch, "/event_destinations/"+dest.ID, `{"description":"same"}`)
		apitest.WantStatus(t, resp, out, http.StatusOK)
	}
	if n := apitest.CounterValue(t, e.reg, "sluice_audit_events_failed_total", "event_type", "event_destination_updated.v0"); n != 0 {
		t.Errorf("sluice_audit_events_failed_total{event_destination_updated.v0} = %v after a PATCH that changed nothing, want 0", n)
	}
	if n := apitest.CounterValue(t, e.reg, "sluice_audit_events_total", "event_type", "event_destination_updated.v0"); n != 1 {
		t.Errorf("sluice_audit_events_total{event_destination_updated.v0} = %v after one change and one PATCH that changed nothing, want 1", n)
	}
}
