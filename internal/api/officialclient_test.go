package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// The official Go API client (github.com/ngrok/ngrok-api-go) cannot be
// pinned here: the module proxy does not serve it. These types and
// officialCall are how it calls the API and decodes the answers, written
// for this test: it marshals the request type (update types carry the id,
// and a route's its edge_id), sets its headers (the version header named
// as the specification names it), decodes a 2xx into the response type
// and anything else into its apiconv.Error, whose details are strings.
type (
	officialError struct {
		ErrorCode  string            `json:"error_code"`
		StatusCode int32             `json:"status_code"`
		Msg        string            `json:"msg"`
		Details    map[string]string `json:"details"`
	}
	officialAPIKey struct {
		ID          string  `json:"id"`
		URI         string  `json:"uri"`
		Description string  `json:"description"`
		Metadata    string  `json:"metadata"`
		CreatedAt   string  `json:"created_at"`
		Token       *string `json:"token"`
	}
	officialAPIKeyCreate struct {
		Description string `json:"description,omitempty"`
		Metadata    string `json:"metadata,omitempty"`
	}
	officialAPIKeyUpdate struct {
		ID          string  `json:"id,omitempty"`
		Description *string `json:"description,omitempty"`
		Metadata    *string `json:"metadata,omitempty"`
	}
	officialAPIKeyList struct {
		Keys        []officialAPIKey `json:"keys,omitempty"`
		URI         string           `json:"uri,omitempty"`
		NextPageURI *string          `json:"next_page_uri,omitempty"`
	}
	officialBotUser struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Active bool   `json:"active"`
	}
	officialBotUserUpdate struct {
		ID     string  `json:"id,omitempty"`
		Name   *string `json:"name,omitempty"`
		Active *bool   `json:"active,omitempty"`
	}
	officialBotUserList struct {
		BotUsers    []officialBotUser `json:"bot_users,omitempty"`
		NextPageURI *string           `json:"next_page_uri,omitempty"`
	}
	officialRoute struct {
		ID          string `json:"id"`
		EdgeID      string `json:"edge_id"`
		Description string `json:"description"`
	}
	officialRouteMutate struct {
		EdgeID      string `json:"edge_id,omitempty"`
		ID          string `json:"id,omitempty"`
		MatchType   string `json:"match_type,omitempty"`
		Match       string `json:"match,omitempty"`
		Description string `json:"description,omitempty"`
	}
)

// officialCall calls the API as the official client does: in (nil: no
// body) marshalled, decoded into out on success; the error it would
// return otherwise, which must decode.
func (e *testEnv) officialCall(t *testing.T, method, path string, in, out any) *officialError {
	t.Helper()
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(raw)
	}
	resp, raw := e.do(t, method, path, e.token, body, func(r *http.Request) {
		r.Header.Set("user-agent", "ngrok-api-go/8.0.0/go1.26")
		if in != nil {
			r.Header.Set("content-type", "application/json")
		}
	})
	if resp.StatusCode >= http.StatusBadRequest {
		var apiErr officialError
		if err := json.Unmarshal(raw, &apiErr); err != nil {
			t.Fatalf("%s %s: the official client cannot read the error: %v: %s", method, path, err, raw)
		}
		return &apiErr
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: the official client cannot read the answer: %v: %s", method, path, err, raw)
		}
	}
	return nil
}

// TestOfficialClientCalls drives API keys, bot users and HTTPS edge
// routes through create, get, list (every page, by next_page_uri),
// update repeating the ids and delete as the official client calls them,
// and reads the errors it would get.
func TestOfficialClientCalls(t *testing.T) {
	e := newTestEnv(t)
	must := func(err *officialError) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s (%d): %s %v", err.ErrorCode, err.StatusCode, err.Msg, err.Details)
		}
	}

	// API keys: listed under keys, page by page.
	var made []officialAPIKey
	for _, d := range []string{"a", "b"} {
		var k officialAPIKey
		must(e.officialCall(t, http.MethodPost, "/api_keys", officialAPIKeyCreate{Description: d}, &k))
		if k.Token == nil {
			t.Fatalf("created key %+v has no token", k)
		}
		made = append(made, k)
	}
	seen := map[string]bool{}
	for next := "/api_keys?limit=1"; next != ""; {
		var page officialAPIKeyList
		must(e.officialCall(t, http.MethodGet, next, nil, &page))
		if len(page.Keys) != 1 {
			t.Fatalf("page %s holds %d keys, want 1", next, len(page.Keys))
		}
		seen[page.Keys[0].ID] = true
		next = ""
		if page.NextPageURI != nil {
			next = (*page.NextPageURI)[len(e.url):]
		}
	}
	if len(seen) != 3 || !seen[made[0].ID] || !seen[made[1].ID] {
		t.Fatalf("the pages listed %v, want the stack's key and %s, %s", seen, made[0].ID, made[1].ID)
	}
	renamed := "renamed"
	var k officialAPIKey
	must(e.officialCall(t, http.MethodPatch, "/api_keys/"+made[0].ID, officialAPIKeyUpdate{ID: made[0].ID, Description: &renamed}, &k))
	if k.Description != renamed || k.ID != made[0].ID {
		t.Fatalf("updated %+v", k)
	}
	err := e.officialCall(t, http.MethodPatch, "/api_keys/"+made[0].ID, officialAPIKeyUpdate{ID: made[1].ID, Description: &renamed}, nil)
	if err == nil || err.StatusCode != http.StatusBadRequest || err.ErrorCode != "ERR_SLUICE_340" || err.Details["field"] != "id" || err.Details["operation_id"] == "" {
		t.Fatalf("update naming another key's id: %+v", err)
	}
	must(e.officialCall(t, http.MethodDelete, "/api_keys/"+made[1].ID, nil, nil))
	if err := e.officialCall(t, http.MethodGet, "/api_keys/"+made[1].ID, nil, &k); err == nil || err.StatusCode != http.StatusNotFound {
		t.Fatalf("get of a deleted key: %+v", err)
	}

	// Bot users.
	var bot officialBotUser
	must(e.officialCall(t, http.MethodPost, "/bot_users", map[string]string{"name": "ci"}, &bot))
	inactive := false
	must(e.officialCall(t, http.MethodPatch, "/bot_users/"+bot.ID, officialBotUserUpdate{ID: bot.ID, Active: &inactive}, &bot))
	var bots officialBotUserList
	must(e.officialCall(t, http.MethodGet, "/bot_users", nil, &bots))
	if len(bots.BotUsers) != 1 || bots.BotUsers[0].Active || bots.NextPageURI != nil {
		t.Fatalf("bot users %+v", bots)
	}
	must(e.officialCall(t, http.MethodDelete, "/bot_users/"+bot.ID, nil, nil))

	// A route, whose create and update repeat its edge and its id.
	var edge struct {
		ID string `json:"id"`
	}
	must(e.officialCall(t, http.MethodPost, "/edges/https", map[string]string{"description": "e"}, &edge))
	routes := "/edges/https/" + edge.ID + "/routes"
	var route officialRoute
	must(e.officialCall(t, http.MethodPost, routes, officialRouteMutate{EdgeID: edge.ID, MatchType: "path_prefix", Match: "/"}, &route))
	must(e.officialCall(t, http.MethodPatch, routes+"/"+route.ID, officialRouteMutate{EdgeID: edge.ID, ID: route.ID, Description: "d"}, &route))
	if route.Description != "d" || route.EdgeID != edge.ID {
		t.Fatalf("updated route %+v", route)
	}

	// An error whose details hold a list reads too.
	dest := e.createdID(t, "/event_destinations", kinesisBody)
	sub := e.createdID(t, "/event_subscriptions", `{"sources":[{"type":"`+httpKind+`"}],"destination_ids":["`+dest+`"]}`)
	err = e.officialCall(t, http.MethodDelete, "/event_destinations/"+dest, nil, nil)
	if err == nil || err.StatusCode != http.StatusConflict || err.Details["subscriptions"] != `["`+sub+`"]` {
		t.Fatalf("delete of a destination in use: %+v", err)
	}
}
