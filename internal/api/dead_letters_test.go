package api_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/filters"
	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/destinations"
	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/producer"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/sinks"
)

// deadLetterEnv is the API with its dead-letter routes, on real NATS,
// redriving to an AWS emulator.
type deadLetterEnv struct {
	*testEnv
	stack *apitest.Stack
	emu   *emulatortest.Emulator
}

func newDeadLetterEnv(t *testing.T) *deadLetterEnv {
	t.Helper()
	ctx := t.Context()
	stack := apitest.Start(t)
	dlq, err := pipeline.EnsureDLQStream(ctx, stack.JS, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	emu := emulatortest.Start(t, emulator.Config{})
	if err := emu.CreateStream("events", 1); err != nil {
		t.Fatal(err)
	}
	factory := destinations.Factory{Endpoint: emu.Endpoint, Auth: &sinks.AWSAuth{AccessKeyID: emulatortest.AccessKeyID, SecretAccessKey: emulatortest.SecretAccessKey}}
	env, err := filters.NewEnv(schemas.Default())
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewJSONHandler(stack.Logs, nil))
	redriver := pipeline.NewRedriver(pipeline.NewDeadLetters(stack.JS, dlq), stack.Store, env, factory.New, log)
	prod, err := producer.New(stack.JS.Conn(), producer.Config{})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(nil)
	t.Cleanup(hs.Close)
	srv, err := api.New(api.Config{BaseURL: "http://" + hs.Listener.Addr().String()}, api.Deps{Keys: stack.Store, Publisher: prod, Destinations: stack.Store, Subscriptions: stack.Store, APIKeys: stack.Store, DeadLetters: redriver, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = srv
	hs.Start()
	e := envOf(t, stack)
	e.url = hs.URL
	return &deadLetterEnv{testEnv: e, stack: stack, emu: emu}
}

// deadLetter stores a dead letter of the route as a worker does: the
// stored event (or bytes that are not one) with headers saying why.
func (e *deadLetterEnv) deadLetter(t *testing.T, subID, destID string, data []byte, eventID string) {
	t.Helper()
	e.deadLetterOf(t, subID, destID, "permanent", data, eventID)
}

// deadLetterOf stores a dead letter of the route of class.
func (e *deadLetterEnv) deadLetterOf(t *testing.T, subID, destID, class string, data []byte, eventID string) {
	t.Helper()
	msg := nats.NewMsg(pipeline.DLQSubject(e.account, destID))
	msg.Data = data
	msg.Header.Set(pipeline.HeaderDLQClass, class)
	msg.Header.Set(pipeline.HeaderDLQCode, "InvalidArgumentException")
	msg.Header.Set(pipeline.HeaderDLQMessage, "refused")
	msg.Header.Set(pipeline.HeaderDLQAttempts, "1")
	msg.Header.Set(pipeline.HeaderDLQFirstFailure, "2026-11-23T04:00:00Z")
	msg.Header.Set(pipeline.HeaderDLQSubscriptionID, subID)
	msg.Header.Set(pipeline.HeaderDLQDestinationID, destID)
	msg.Header.Set(pipeline.HeaderDLQEventID, eventID)
	if _, err := e.js.PublishMsg(t.Context(), msg); err != nil {
		t.Fatal(err)
	}
}

type deadLetterPage struct {
	DeadLetters []struct {
		ID             string          `json:"id"`
		EventID        string          `json:"event_id"`
		SubscriptionID string          `json:"subscription_id"`
		Class          string          `json:"class"`
		Code           string          `json:"code"`
		Attempts       int             `json:"attempts"`
		Event          json.RawMessage `json:"event"`
	} `json:"dead_letters"`
	NextPageURI *string `json:"next_page_uri"`
}

type redriveResult struct {
	Redriven  int `json:"redriven"`
	Failed    int `json:"failed"`
	Remaining int `json:"remaining"`
	Failures  []struct {
		ID, Class, Code, Message string
	} `json:"failures"`
}

func TestDeadLetters(t *testing.T) {
	e := newDeadLetterEnv(t)
	ctx := t.Context()
	resp, out := e.call(t, e.token, http.MethodPost, "/event_destinations", `{"target":{"kinesis":{"auth":{"creds":{"aws_access_key_id":"`+testKeyID+`","aws_secret_access_key":"`+testSecret+`"}},"stream_arn":"`+testStreamARN+`"}}}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("creating the destination: %d %s", resp.StatusCode, out)
	}
	var dest destination
	if err := json.Unmarshal(out, &dest); err != nil {
		t.Fatal(err)
	}
	sub, err := e.store.CreateSubscription(ctx, e.account, store.Subscription{Sources: []store.Source{{Type: tcpKind, Fields: []string{"conn.server_port"}}}, DestinationIDs: []string{dest.ID}})
	if err != nil {
		t.Fatal(err)
	}
	// 25 dead letters, 3 of them not events (they can never go).
	sampler := schemas.NewSampler(7)
	var eventIDs []string
	for i := range 25 {
		ev, err := sampler.Event(tcpKind)
		if err != nil {
			t.Fatal(err)
		}
		ev.AccountID = e.account
		data := ev.AppendJSON(nil)
		if i%8 == 1 {
			data = []byte("not an event " + ev.ID)
		}
		e.deadLetter(t, sub.ID, dest.ID, data, ev.ID)
		eventIDs = append(eventIDs, ev.ID)
	}

	t.Run("listed newest first, paged", func(t *testing.T) {
		var got []string
		path := "/event_destinations/" + dest.ID + "/dead_letters?limit=10"
		for pages := 0; path != ""; pages++ {
			resp, out := e.call(t, e.token, http.MethodGet, path, "")
			if resp.StatusCode != http.StatusOK || pages > 3 {
				t.Fatalf("GET %s: %d %s", path, resp.StatusCode, out)
			}
			var page deadLetterPage
			if err := json.Unmarshal(out, &page); err != nil {
				t.Fatal(err)
			}
			for _, d := range page.DeadLetters {
				if d.SubscriptionID != sub.ID || d.Class != "permanent" || d.Code != "InvalidArgumentException" || d.Attempts != 1 {
					t.Fatalf("dead letter %s", out)
				}
				malformed := string(d.Event) == "null"
				if !malformed && !strings.Contains(string(d.Event), `"event_id":"`+d.EventID+`"`) {
					t.Fatalf("dead letter %s has event %s", d.ID, d.Event)
				}
				got = append(got, d.EventID)
			}
			path = ""
			if page.NextPageURI != nil {
				if len(page.DeadLetters) != 10 {
					t.Fatalf("a page of %d before the last", len(page.DeadLetters))
				}
				path = strings.TrimPrefix(*page.NextPageURI, e.url)
			}
		}
		want := slices.Clone(eventIDs)
		slices.Reverse(want)
		if !slices.Equal(got, want) {
			t.Fatalf("listed %v\nwant %v", got, want)
		}
	})

	t.Run("errors", func(t *testing.T) {
		other, err := e.store.CreateAccount(ctx, "other")
		if err != nil {
			t.Fatal(err)
		}
		key, err := e.store.CreateAPIKey(ctx, other.ID, store.APIKeyInput{Description: "other"}, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			token, method, path, body, code string
		}{
			{key.Token, http.MethodGet, "/event_destinations/" + dest.ID + "/dead_letters", "", "ERR_SLUICE_420"},
			{key.Token, http.MethodPost, "/event_destinations/" + dest.ID + "/dead_letters/redrive", "", "ERR_SLUICE_420"},
			{e.token, http.MethodGet, "/event_destinations/" + dest.ID + "/dead_letters?before_id=ed_1", "", "ERR_SLUICE_334"},
			{e.token, http.MethodGet, "/event_destinations/" + dest.ID + "/dead_letters?limit=101", "", "ERR_SLUICE_334"},
			{e.token, http.MethodPost, "/event_destinations/" + dest.ID + "/dead_letters/redrive", `{"ids":["x"]}`, "ERR_SLUICE_333"},
			{e.token, http.MethodPost, "/event_destinations/" + dest.ID + "/dead_letters/redrive", `{"id":["dl_1"]}`, "ERR_SLUICE_331"},
		} {
			resp, out := e.call(t, c.token, c.method, c.path, c.body)
			if got := apitest.DecodeError(t, out); got.ErrorCode != c.code {
				t.Errorf("%s %s %s: %d %s, want %s", c.method, c.path, c.body, resp.StatusCode, out, c.code)
			}
		}
	})

	redrive := func(t *testing.T, body string) redriveResult {
		t.Helper()
		resp, out := e.call(t, e.token, http.MethodPost, "/event_destinations/"+dest.ID+"/dead_letters/redrive", body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("redrive %s: %d %s", body, resp.StatusCode, out)
		}
		var r redriveResult
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	stored := func(t *testing.T) int {
		t.Helper()
		records, err := e.emu.KinesisRecords("events")
		if err != nil {
			t.Fatal(err)
		}
		return len(records)
	}

	t.Run("a broken destination keeps them", func(t *testing.T) {
		if err := e.emu.SetFault(emulator.Fault{Service: emulator.ServiceKinesis, Resource: "events", AccessDenied: true}); err != nil {
			t.Fatal(err)
		}
		defer e.emu.ClearFaults()
		r := redrive(t, "")
		denied := slices.ContainsFunc(r.Failures, func(f struct{ ID, Class, Code, Message string }) bool {
			return f.Class == "access_denied" && f.Code == "AccessDeniedException"
		})
		if r.Redriven != 0 || r.Remaining != 25 || r.Failed == 0 || !denied || stored(t) != 0 {
			t.Fatalf("redrive to a broken destination: %+v", r)
		}
	})

	t.Run("after the fix, some", func(t *testing.T) {
		r := redrive(t, `{"ids":["dl_1","dl_3","dl_999"]}`)
		want := redriveResult{Redriven: 2, Failed: 1, Remaining: 23}
		if r.Redriven != want.Redriven || r.Failed != want.Failed || r.Remaining != want.Remaining || r.Failures[0].ID != "dl_999" || r.Failures[0].Class != "unknown_id" || stored(t) != 2 {
			t.Fatalf("redrive of ids: %+v", r)
		}
	})

	t.Run("after the fix, all", func(t *testing.T) {
		r := redrive(t, "")
		if r.Redriven != 20 || r.Failed != 3 || r.Remaining != 3 || len(r.Failures) != 3 || r.Failures[0].Class != "malformed" || stored(t) != 22 {
			t.Fatalf("redrive of all: %+v", r)
		}
		records, err := e.emu.KinesisRecords("events")
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range records {
			var ev struct {
				Object map[string]map[string]json.RawMessage `json:"object"`
			}
			if err := json.Unmarshal(rec.Data, &ev); err != nil || len(ev.Object) != 1 || len(ev.Object["conn"]) != 1 || ev.Object["conn"]["server_port"] == nil {
				t.Fatalf("record without the subscription's fields only: %s", rec.Data)
			}
		}
		resp, out := e.call(t, e.token, http.MethodGet, "/event_destinations/"+dest.ID+"/dead_letters", "")
		var page deadLetterPage
		if err := json.Unmarshal(out, &page); err != nil || resp.StatusCode != http.StatusOK || len(page.DeadLetters) != 3 || page.NextPageURI != nil {
			t.Fatalf("left: %d %s", resp.StatusCode, out)
		}
		for _, d := range page.DeadLetters {
			if string(d.Event) != "null" {
				t.Fatalf("left a deliverable letter: %s", out)
			}
		}
	})
	if strings.Contains(e.stack.Logs.String(), testSecret) {
		t.Fatal("the logs show the secret")
	}
}
