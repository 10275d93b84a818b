package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
)

type replay struct {
	ID             string `json:"id"`
	URI            string `json:"uri"`
	SubscriptionID string `json:"subscription_id"`
	Since          string `json:"since"`
	Until          string `json:"until"`
	State          string `json:"state"`
	EventsReplayed uint64 `json:"events_replayed"`
	EventsTotal    uint64 `json:"events_total"`
	CreatedAt      string `json:"created_at"`
}

func TestReplays(t *testing.T) {
	e := newTestEnv(t, apitest.WithDeps(func(deps *api.Deps, js jetstream.JetStream) {
		stream, err := js.Stream(context.Background(), pipeline.EventsStream)
		if err != nil {
			t.Fatal(err)
		}
		deps.Replays = pipeline.NewReplayer(stream, deps.Subscriptions.(*store.Store).Replays(), deps.Subscriptions)
	}))
	dest := e.create(t, kinesisBody)
	sub := e.createSubscription(t, `{"sources":[{"type":"`+httpKind+`"}],"destination_ids":["`+dest.ID+`"]}`)
	path := "/event_subscriptions/" + sub.ID
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	// Three events of the subscription's kind, and one of another.
	resp, out := e.post(t, []byte(`[{"event_type":"`+httpKind+`","object":{}},{"event_type":"`+httpKind+`","object":{}},`+
		`{"event_type":"`+httpKind+`","object":{}},{"event_type":"tcp_connection_closed.v0","object":{}}]`), nil)
	apitest.WantStatus(t, resp, out, http.StatusAccepted)

	resp, out = e.call(t, e.token, http.MethodPost, path+"/replay", `{"since":"`+since+`"}`)
	apitest.WantStatus(t, resp, out, http.StatusAccepted)
	started := apitest.DecodeAs[replay](t, out)
	if started.SubscriptionID != sub.ID || started.State != "running" || !strings.HasSuffix(started.URI, path+"/replays/"+started.ID) {
		t.Fatalf("replay %+v", started)
	}
	if started.EventsTotal != 3 || started.EventsReplayed != 0 {
		t.Fatalf("replay of %d of %d events, want 0 of 3", started.EventsReplayed, started.EventsTotal)
	}
	if got, err := time.Parse(time.RFC3339Nano, started.Since); err != nil || got.Format(time.RFC3339) != since {
		t.Fatalf("since %q, want %s", started.Since, since)
	}

	resp, out = e.call(t, e.token, http.MethodGet, path+"/replays/"+started.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[replay](t, out); got != started {
		t.Fatalf("GET = %+v, want %+v", got, started)
	}
	resp, out = e.call(t, e.token, http.MethodGet, path+"/replays", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if list := apitest.DecodeAs[struct{ Replays []replay }](t, out); len(list.Replays) != 1 || list.Replays[0] != started {
		t.Fatalf("list %s", out)
	}

	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	ancient := time.Now().Add(-pipeline.DefaultRetention - time.Hour).UTC().Format(time.RFC3339)
	for _, c := range []struct {
		name, body, field string
	}{
		{"no since", `{}`, "since"},
		{"since not a time", `{"since":"1h"}`, "since"},
		{"until not a time", `{"since":"` + since + `","until":"yesterday"}`, "until"},
		{"until in the future", `{"since":"` + since + `","until":"` + future + `"}`, "until"},
		{"since after until", `{"since":"` + future + `"}`, "since"},
		{"since before the retention", `{"since":"` + ancient + `"}`, "since"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, out := e.call(t, e.token, http.MethodPost, path+"/replay", c.body)
			wantError(t, resp, out, http.StatusBadRequest, "ERR_SLUICE_333", c.field)
		})
	}

	// Another account's subscription, and a replay of another subscription, are not found.
	other, err := e.store.CreateAccount(t.Context(), "other")
	if err != nil {
		t.Fatal(err)
	}
	otherSub, err := e.store.CreateSubscription(t.Context(), other.ID, store.Subscription{Sources: []store.Source{{Type: httpKind}}})
	if err != nil {
		t.Fatal(err)
	}
	resp, out = e.call(t, e.token, http.MethodPost, "/event_subscriptions/"+otherSub.ID+"/replay", `{"since":"`+since+`"}`)
	wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", "")
	resp, out = e.call(t, e.token, http.MethodGet, "/event_subscriptions/"+otherSub.ID+"/replays", "")
	wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", "")
	second := e.createSubscription(t, `{"sources":[{"type":"`+httpKind+`"}],"destination_ids":["`+dest.ID+`"]}`)
	resp, out = e.call(t, e.token, http.MethodGet, "/event_subscriptions/"+second.ID+"/replays/"+started.ID, "")
	wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", "")
}
