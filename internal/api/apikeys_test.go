package api_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/internal/apitest"
)

// apiKey is an API key as the API returns it.
type apiKey struct {
	ID          string  `json:"id"`
	URI         string  `json:"uri"`
	Description string  `json:"description"`
	Metadata    string  `json:"metadata"`
	CreatedAt   string  `json:"created_at"`
	Token       *string `json:"token"`
}

type apiKeyList struct {
	APIKeys     []apiKey `json:"keys"`
	URI         string   `json:"uri"`
	NextPageURI *string  `json:"next_page_uri"`
}

var tokenPattern = regexp.MustCompile(`^sk_[0-9A-Za-z]{43}$`)

// createKey creates an API key from body and returns it with its token.
func (e *testEnv) createKey(t *testing.T, body string) apiKey {
	t.Helper()
	resp, out := e.call(t, e.token, http.MethodPost, "/api_keys", body)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	key := apitest.DecodeAs[apiKey](t, out)
	if key.Token == nil || !tokenPattern.MatchString(*key.Token) {
		t.Fatalf("created key has no token: %s", out)
	}
	if resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("the answer with a token may be cached: Cache-Control %q", resp.Header.Get("Cache-Control"))
	}
	return key
}

func TestAPIKeyRoundTrip(t *testing.T) {
	e := newTestEnv(t)
	created := e.createKey(t, `{"description":"ci","metadata":"{\"team\":\"ops\"}"}`)
	if !strings.HasPrefix(created.ID, "ak_") || created.URI != e.url+"/api_keys/"+created.ID || created.Description != "ci" || !strings.HasSuffix(created.CreatedAt, "Z") {
		t.Fatalf("created %+v", created)
	}
	token := *created.Token

	// The new key works, and no answer but the first shows its token.
	resp, out := e.call(t, token, http.MethodGet, "/api_keys/"+created.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[apiKey](t, out); got.Token != nil || got.ID != created.ID || got.Metadata != `{"team":"ops"}` {
		t.Fatalf("got %s", out)
	}
	resp, out = e.call(t, token, http.MethodGet, "/api_keys", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	list := apitest.DecodeAs[apiKeyList](t, out)
	if len(list.APIKeys) != 2 || list.NextPageURI != nil || strings.Contains(string(out), token) || strings.Contains(string(out), e.token) {
		t.Fatalf("list %s: want both keys of the account, without tokens", out)
	}

	resp, out = e.call(t, e.token, http.MethodPatch, "/api_keys/"+created.ID, `{"description":"renamed"}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[apiKey](t, out); got.Description != "renamed" || got.Metadata != `{"team":"ops"}` || got.Token != nil {
		t.Fatalf("patched %s", out)
	}
	resp, out = e.call(t, token, http.MethodGet, "/api_keys/"+created.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK) // an update keeps the token

	// A key may delete itself; its token stops working at once.
	resp, out = e.call(t, token, http.MethodDelete, "/api_keys/"+created.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
	resp, out = e.call(t, token, http.MethodGet, "/api_keys", "")
	wantError(t, resp, out, http.StatusUnauthorized, "ERR_SLUICE_211", "")
	resp, out = e.call(t, e.token, http.MethodGet, "/api_keys/"+created.ID, "")
	wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", "")

	// The account's only key cannot go.
	resp, out = e.call(t, e.token, http.MethodDelete, "/api_keys/"+e.keyID, "")
	wantError(t, resp, out, http.StatusConflict, "ERR_SLUICE_423", "")
	resp, out = e.call(t, e.token, http.MethodGet, "/api_keys", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
}

func TestAPIKeyValidation(t *testing.T) {
	e := newTestEnv(t)
	tests := []struct {
		name, method, path, body, code, field string
	}{
		{"description of 256 bytes", http.MethodPost, "/api_keys", `{"description":"` + strings.Repeat("é", 128) + `"}`, "ERR_SLUICE_333", "description"},
		{"metadata of 4097 bytes", http.MethodPost, "/api_keys", `{"metadata":"` + strings.Repeat("m", 4097) + `"}`, "ERR_SLUICE_333", "metadata"},
		{"metadata of 2049 two-byte characters, 4098 bytes", http.MethodPost, "/api_keys", `{"metadata":"` + strings.Repeat("é", 2049) + `"}`, "ERR_SLUICE_333", "metadata"},
		{"update metadata of 4097 bytes", http.MethodPatch, "/api_keys/" + "KEY", `{"metadata":"` + strings.Repeat("m", 4097) + `"}`, "ERR_SLUICE_333", "metadata"},
		{"a token chosen", http.MethodPost, "/api_keys", `{"token":"sk_mine_0123456789"}`, "ERR_SLUICE_331", ""},
		{"description a number", http.MethodPost, "/api_keys", `{"description":1}`, "ERR_SLUICE_332", "description"},
		{"update too long", http.MethodPatch, "/api_keys/" + "KEY", `{"description":"` + strings.Repeat("d", 256) + `"}`, "ERR_SLUICE_333", "description"},
		{"update the token", http.MethodPatch, "/api_keys/" + "KEY", `{"token":null}`, "ERR_SLUICE_331", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, out := e.call(t, e.token, tt.method, strings.Replace(tt.path, "KEY", e.keyID, 1), tt.body)
			wantError(t, resp, out, http.StatusBadRequest, tt.code, tt.field)
		})
	}
	resp, out := e.call(t, e.token, http.MethodGet, "/api_keys", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if keys := apitest.DecodeAs[apiKeyList](t, out).APIKeys; len(keys) != 1 || keys[0].Description != "test" {
		t.Fatalf("after refused calls, keys are %s", out)
	}
	// 255 and 4096 bytes, in characters of two bytes, are within the limits.
	desc, meta := "d"+strings.Repeat("é", 127), strings.Repeat("é", 2048)
	if key := e.createKey(t, `{"description":"`+desc+`","metadata":"`+meta+`"}`); key.Description != desc || key.Metadata != meta {
		t.Fatalf("created %+v", key)
	}
}

// TestDeletedKeyStopsInEveryProcess runs two APIs on one NATS server, as
// two sluice processes: a key deleted through one is refused by both on
// the very next call, with no wait.
func TestDeletedKeyStopsInEveryProcess(t *testing.T) {
	first := apitest.Start(t)
	processes := []*testEnv{envOf(t, first), envOf(t, first.Another(t))}
	for round, deleter := range processes {
		key := processes[0].createKey(t, fmt.Sprintf(`{"description":"round %d"}`, round))
		for _, p := range processes {
			resp, out := p.call(t, *key.Token, http.MethodGet, "/api_keys/"+key.ID, "")
			apitest.WantStatus(t, resp, out, http.StatusOK)
		}
		resp, out := deleter.call(t, deleter.token, http.MethodDelete, "/api_keys/"+key.ID, "")
		apitest.WantStatus(t, resp, out, http.StatusNoContent)
		for i, p := range processes {
			resp, out := p.call(t, *key.Token, http.MethodGet, "/event_subscriptions", "")
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("round %d: process %d took the key deleted through process %d: %d %s", round, i, round, resp.StatusCode, out)
			}
			wantError(t, resp, out, http.StatusUnauthorized, "ERR_SLUICE_211", "")
		}
	}
}

// TestConcurrentDeletesLeaveAKey deletes every key of the account at once
// over HTTP, each with its own token: all but one go, the last is refused
// with 409 ERR_SLUICE_423, and it still works.
func TestConcurrentDeletesLeaveAKey(t *testing.T) {
	e := newTestEnv(t)
	keys := []apiKey{{ID: e.keyID, Token: &e.token}}
	for i := range 5 {
		keys = append(keys, e.createKey(t, fmt.Sprintf(`{"description":"%d"}`, i)))
	}
	statuses := make(chan int, len(keys))
	var wg sync.WaitGroup
	for _, k := range keys {
		wg.Go(func() {
			resp, out := e.call(t, *k.Token, http.MethodDelete, "/api_keys/"+k.ID, "")
			if resp.StatusCode == http.StatusConflict && apitest.DecodeError(t, out).ErrorCode != "ERR_SLUICE_423" {
				t.Errorf("DELETE %s: %s", k.ID, out)
			}
			statuses <- resp.StatusCode
		})
	}
	wg.Wait()
	close(statuses)
	refused := 0
	for status := range statuses {
		if status == http.StatusConflict {
			refused++
		} else if status != http.StatusNoContent {
			t.Errorf("DELETE answered %d", status)
		}
	}
	if refused != 1 {
		t.Fatalf("%d deletes refused, want 1: the last key must stay", refused)
	}
	for _, k := range keys {
		if resp, out := e.call(t, *k.Token, http.MethodGet, "/api_keys", ""); resp.StatusCode == http.StatusOK {
			if n := len(apitest.DecodeAs[apiKeyList](t, out).APIKeys); n != 1 {
				t.Fatalf("%d keys left, want 1: %s", n, out)
			}
			return
		}
	}
	t.Fatal("no key works any more")
}
