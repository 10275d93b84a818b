package api_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// TestAccountIsolation checks that a key of one account finds none of
// another account's resources: every call on them is a 404, naming one of
// its destinations in destination_ids is answered as naming one that does
// not exist, every list holds only the key's own, and nothing changes.
func TestAccountIsolation(t *testing.T) {
	e := newTestEnv(t)
	ctx := t.Context()
	other, err := e.store.CreateAccount(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	otherKey, err := e.store.CreateAPIKey(ctx, other.ID, store.APIKeyInput{Description: "other"}, "")
	if err != nil {
		t.Fatal(err)
	}
	dest := e.create(t, kinesisBody)
	sub := e.createSubscription(t, `{"sources":[{"type":"`+httpKind+`"}],"destination_ids":["`+dest.ID+`"]}`)
	key := e.createKey(t, `{"description":"second"}`)
	before := e.storedEvents(t, e.account)

	paths := []struct{ path, patch string }{
		{"/event_destinations/" + dest.ID, `{"description":"mine"}`},
		{"/event_subscriptions/" + sub.ID, `{"description":"mine"}`},
		{"/event_subscriptions/" + sub.ID + "/sources/" + httpKind, `{"filter":"true"}`},
		{"/api_keys/" + key.ID, `{"description":"mine"}`},
		{"/api_keys/" + e.keyID, `{"description":"mine"}`},
	}
	for _, p := range paths {
		for _, c := range []struct{ method, body string }{{http.MethodGet, ""}, {http.MethodPatch, p.patch}, {http.MethodDelete, ""}} {
			resp, out := e.call(t, otherKey.Token, c.method, p.path, c.body)
			wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", "")
		}
	}
	for _, p := range []struct{ method, path, body string }{
		{http.MethodGet, "/event_subscriptions/" + sub.ID + "/sources", ""},
		{http.MethodPost, "/event_subscriptions/" + sub.ID + "/sources", `{"type":"` + tcpKind + `"}`},
	} {
		resp, out := e.call(t, otherKey.Token, p.method, p.path, p.body)
		wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", "")
	}
	// Naming another account's destination in a body is refused exactly as
	// naming one that does not exist: a 400 of the field (the request's
	// target exists; the body is wrong), with the same message.
	otherSub, err := e.store.CreateSubscription(ctx, other.ID, store.Subscription{})
	if err != nil {
		t.Fatal(err)
	}
	const missing = "ed_2ZVXCKvrcw0TxPDk1JLmC8b3eBQ"
	for _, c := range []struct{ method, path string }{
		{http.MethodPost, "/event_subscriptions"},
		{http.MethodPatch, "/event_subscriptions/" + otherSub.ID},
	} {
		var msgs []string
		for _, id := range []string{dest.ID, missing} {
			resp, out := e.call(t, otherKey.Token, c.method, c.path, `{"destination_ids":["`+id+`"]}`)
			msg := wantError(t, resp, out, http.StatusBadRequest, "ERR_SLUICE_333", "destination_ids[0]")
			msgs = append(msgs, strings.ReplaceAll(msg, id, "ID"))
		}
		if msgs[0] != msgs[1] {
			t.Errorf("%s %s tells another account's destination from a missing one: %q, %q", c.method, c.path, msgs[0], msgs[1])
		}
	}

	lists := map[string]int{"/event_destinations": 0, "/event_subscriptions": 1, "/api_keys": 1}
	for path, n := range lists {
		resp, out := e.call(t, otherKey.Token, http.MethodGet, path, "")
		apitest.WantStatus(t, resp, out, http.StatusOK)
		if strings.Count(string(out), `"id":`) != n || strings.Contains(string(out), e.account) {
			t.Errorf("GET %s by the other account: %s", path, out)
		}
	}

	// Nothing of the first account changed, and no event says otherwise.
	for _, path := range []string{"/event_destinations/" + dest.ID, "/event_subscriptions/" + sub.ID, "/api_keys/" + key.ID} {
		resp, out := e.call(t, e.token, http.MethodGet, path, "")
		apitest.WantStatus(t, resp, out, http.StatusOK)
		if strings.Contains(string(out), "mine") {
			t.Errorf("%s was changed by the other account: %s", path, out)
		}
	}
	if after := e.storedEvents(t, e.account); len(after) != len(before) {
		t.Errorf("%d events of the account after the other's calls, want %d", len(after), len(before))
	}
	if events := e.storedEvents(t, other.ID); len(events) != 0 {
		t.Errorf("the other account's failed calls stored %d events", len(events))
	}
}

// manyChangesAtOnce lets one account have more management requests in
// flight than the front door's default share, for the tests of concurrent
// changes to one resource.
func manyChangesAtOnce() apitest.Option {
	return apitest.WithConfig(api.Config{DoorConfig: apiconv.DoorConfig{MaxAccountManagementInFlight: 64}})
}

// TestConcurrentSourceChanges adds sources to one subscription from many
// clients at once: each is a read-modify-write of the whole subscription,
// and none may be lost.
func TestConcurrentSourceChanges(t *testing.T) {
	e := newTestEnv(t, manyChangesAtOnce())
	sub := e.createSubscription(t, `{}`)
	var kinds []string
	for _, k := range schemas.Default().Kinds() {
		if k.Class == schemas.ClassAudit && len(kinds) < 20 {
			kinds = append(kinds, k.Name)
		}
	}
	var wg sync.WaitGroup
	for _, kind := range kinds {
		wg.Go(func() {
			resp, out := e.call(t, e.token, http.MethodPost, "/event_subscriptions/"+sub.ID+"/sources", `{"type":"`+kind+`"}`)
			if resp.StatusCode != http.StatusCreated {
				t.Errorf("adding %s: %d %s", kind, resp.StatusCode, out)
			}
		})
	}
	// And concurrent PATCHes of the description, each answered with its
	// own change applied.
	for i := range 10 {
		wg.Go(func() {
			desc := "writer " + strings.Repeat("x", i)
			resp, out := e.call(t, e.token, http.MethodPatch, "/event_subscriptions/"+sub.ID, `{"description":"`+desc+`"}`)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(out), `"description":"`+desc+`"`) {
				t.Errorf("PATCH %d: %d %s", i, resp.StatusCode, out)
			}
		})
	}
	wg.Wait()
	resp, out := e.call(t, e.token, http.MethodGet, "/event_subscriptions/"+sub.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	var got []string
	for _, src := range apitest.DecodeAs[subscription](t, out).Sources {
		got = append(got, src.Type)
	}
	slices.Sort(got)
	slices.Sort(kinds)
	if !slices.Equal(got, kinds) {
		t.Fatalf("sources %v, want all of %v", got, kinds)
	}
}

// TestConcurrentPatches sends, round after round, PATCHes of different
// fields of one subscription (two of them through its sources), one
// destination and one API key all at once: each is a read-modify-write of
// the whole resource, and after every round each field holds its round's
// value, so no PATCH lost another's change.
func TestConcurrentPatches(t *testing.T) {
	e := newTestEnv(t, manyChangesAtOnce())
	dests := []destination{e.create(t, kinesisBody), e.create(t, kinesisBody)}
	sub := e.createSubscription(t, `{"sources":[{"type":"`+httpKind+`"},{"type":"`+tcpKind+`"}]}`)
	key := e.createKey(t, `{}`)
	subPath, destPath, keyPath := "/event_subscriptions/"+sub.ID, "/event_destinations/"+dests[0].ID, "/api_keys/"+key.ID
	roleARN := func(round int) string { return fmt.Sprintf("arn:aws:iam::123456789012:role/sluice-%d", round) }
	for round := range 8 {
		patches := []struct{ path, body string }{
			{subPath, fmt.Sprintf(`{"description":"d%d"}`, round)},
			{subPath, fmt.Sprintf(`{"metadata":"m%d"}`, round)},
			{subPath, fmt.Sprintf(`{"destination_ids":["%s"]}`, dests[round%2].ID)},
			{subPath + "/sources/" + httpKind, fmt.Sprintf(`{"filter":"ev.conn.server_port == %d"}`, round)},
			{subPath + "/sources/" + tcpKind, fmt.Sprintf(`{"fields":["conn.bytes_in","conn.server_port"],"filter":"ev.conn.server_port != %d"}`, round)},
			{destPath, fmt.Sprintf(`{"description":"d%d"}`, round)},
			{destPath, fmt.Sprintf(`{"metadata":"m%d"}`, round)},
			{destPath, `{"target":{"kinesis":{"auth":{"role":{"role_arn":"` + roleARN(round) + `"}},"stream_arn":"` + testStreamARN + `"}}}`},
			{keyPath, fmt.Sprintf(`{"description":"d%d"}`, round)},
			{keyPath, fmt.Sprintf(`{"metadata":"m%d"}`, round)},
		}
		var wg sync.WaitGroup
		for _, p := range patches {
			wg.Go(func() {
				resp, out := e.call(t, e.token, http.MethodPatch, p.path, p.body)
				if resp.StatusCode != http.StatusOK {
					t.Errorf("PATCH %s %s: %d %s", p.path, p.body, resp.StatusCode, out)
				}
			})
		}
		wg.Wait()

		resp, out := e.call(t, e.token, http.MethodGet, subPath, "")
		apitest.WantStatus(t, resp, out, http.StatusOK)
		got := apitest.DecodeAs[subscription](t, out)
		wantSources := []source{
			{Type: httpKind, URI: sub.URI + "/sources/" + httpKind, Filter: fmt.Sprintf("ev.conn.server_port == %d", round)},
			{Type: tcpKind, URI: sub.URI + "/sources/" + tcpKind, Filter: fmt.Sprintf("ev.conn.server_port != %d", round), Fields: []string{"conn.bytes_in", "conn.server_port"}},
		}
		if got.Description != fmt.Sprintf("d%d", round) || got.Metadata != fmt.Sprintf("m%d", round) ||
			len(got.Destinations) != 1 || got.Destinations[0].ID != dests[round%2].ID || !sourcesEqual(got.Sources, wantSources) {
			t.Fatalf("round %d: a PATCH of the subscription was lost: %s", round, out)
		}
		resp, out = e.call(t, e.token, http.MethodGet, destPath, "")
		apitest.WantStatus(t, resp, out, http.StatusOK)
		if d := apitest.DecodeAs[destination](t, out); d.Description != fmt.Sprintf("d%d", round) || d.Metadata != fmt.Sprintf("m%d", round) || !strings.Contains(string(d.Target), roleARN(round)+`"`) {
			t.Fatalf("round %d: a PATCH of the destination was lost: %s", round, out)
		}
		resp, out = e.call(t, e.token, http.MethodGet, keyPath, "")
		apitest.WantStatus(t, resp, out, http.StatusOK)
		if k := apitest.DecodeAs[apiKey](t, out); k.Description != fmt.Sprintf("d%d", round) || k.Metadata != fmt.Sprintf("m%d", round) {
			t.Fatalf("round %d: a PATCH of the API key was lost: %s", round, out)
		}
	}
}
