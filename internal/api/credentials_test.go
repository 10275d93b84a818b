package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/store"
)

// credential is a tunnel credential as the API returns it.
type credential struct {
	ID          string   `json:"id"`
	URI         string   `json:"uri"`
	CreatedAt   string   `json:"created_at"`
	Description string   `json:"description"`
	Metadata    string   `json:"metadata"`
	Token       *string  `json:"token"`
	ACL         []string `json:"acl"`
	OwnerID     *string  `json:"owner_id"`
}

// createCredential creates a credential with the body.
func (e *testEnv) createCredential(t *testing.T, body string) credential {
	t.Helper()
	resp, out := e.call(t, e.token, http.MethodPost, "/credentials", body)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	return apitest.DecodeAs[credential](t, out)
}

// TestCredentialRoundTrip creates, reads, lists, changes and deletes a
// credential: the token once, in the create's answer and nowhere else, the
// body's fields in the specification's order, and each change's audit
// event stored with the token null.
func TestCredentialRoundTrip(t *testing.T) {
	e := newTestEnv(t)
	bot := e.createBotUser(t, "agent")
	resp, out := e.call(t, e.token, http.MethodPost, "/credentials",
		fmt.Sprintf(`{"description":"edge","metadata":"{\"k\":1}","acl":["bind:*.example.com","bind:example.com:8443"],"owner_id":%q}`, bot.ID))
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	created := apitest.DecodeAs[credential](t, out)
	if resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("the answer with the token may be cached: %v", resp.Header)
	}
	if !strings.HasPrefix(created.ID, "cr_") || created.URI != e.url+"/credentials/"+created.ID || created.Token == nil ||
		!strings.HasPrefix(*created.Token, store.CredentialTokenPrefix) || created.OwnerID == nil || *created.OwnerID != bot.ID ||
		len(created.ACL) != 2 || created.Description != "edge" || !strings.HasSuffix(created.CreatedAt, "Z") {
		t.Fatalf("created %s", out)
	}
	token := *created.Token
	if want := fmt.Sprintf(`{"id":%q,"uri":%q,"created_at":%q,"description":"edge","metadata":"{\"k\":1}","token":%q,"acl":["bind:*.example.com","bind:example.com:8443"],"owner_id":%q}`+"\n",
		created.ID, created.URI, created.CreatedAt, token, bot.ID); string(out) != want {
		t.Fatalf("body\n %s\nwant\n %s", out, want)
	}

	resp, out = e.call(t, e.token, http.MethodGet, "/credentials/"+created.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if strings.Contains(string(out), token) || apitest.DecodeAs[credential](t, out).Token != nil || !strings.Contains(string(out), `"token":null`) {
		t.Fatalf("a get shows the token: %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodGet, "/credentials", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if strings.Contains(string(out), token) || !strings.HasPrefix(string(out), `{"credentials":[{"id":"`+created.ID) {
		t.Fatalf("list %s", out)
	}

	resp, out = e.call(t, e.token, http.MethodPatch, "/credentials/"+created.ID, `{"acl":["*"],"owner_id":"","description":"edge 2"}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[credential](t, out); got.OwnerID != nil || len(got.ACL) != 1 || got.Token != nil || got.Description != "edge 2" || got.Metadata != `{"k":1}` {
		t.Fatalf("patched %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodPatch, "/credentials/"+created.ID, `{"acl":[]}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if !strings.Contains(string(out), `"acl":[]`) || !strings.Contains(string(out), `"owner_id":null`) {
		t.Fatalf("an empty acl: %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodDelete, "/credentials/"+created.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
	resp, out = e.call(t, e.token, http.MethodGet, "/credentials/"+created.ID, "")
	wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", "")

	events := e.storedEvents(t, e.account)
	var kinds []string
	for _, ev := range events {
		kinds = append(kinds, ev.Type)
		if strings.Contains(ev.raw, token) {
			t.Fatalf("an audit event holds the token: %s", ev.raw)
		}
		var object map[string]json.RawMessage
		if err := json.Unmarshal(ev.Object, &object); err != nil {
			t.Fatal(err)
		}
		for _, field := range []string{"id", "uri", "created_at", "description", "metadata", "token", "acl"} {
			if _, ok := object[field]; !ok {
				t.Errorf("%s without %s: %s", ev.Type, field, ev.Object)
			}
		}
		if string(object["token"]) != "null" || string(object["id"]) != `"`+created.ID+`"` || ev.Principal.ID != e.keyID {
			t.Errorf("%s: %s", ev.Type, ev.raw)
		}
	}
	if want := "tunnel_credential_created.v0 tunnel_credential_updated.v0 tunnel_credential_updated.v0 tunnel_credential_deleted.v0"; strings.Join(kinds, " ") != want {
		t.Fatalf("audit events %v, want %s", kinds, want)
	}
}

// TestCredentialValidation: a bad field is a 400 naming it and saying what
// is allowed; nothing is created.
func TestCredentialValidation(t *testing.T) {
	e := newTestEnv(t)
	c := e.createCredential(t, `{}`)
	other := e.otherAccountToken(t)
	resp, out := e.call(t, other, http.MethodPost, "/bot_users", `{"name":"theirs"}`)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	theirs := apitest.DecodeAs[botUser](t, out)
	tests := []struct {
		name, method, path, body, code, field, says string
	}{
		{"bad rule", http.MethodPost, "/credentials", `{"acl":["connect:example.com"]}`, "ERR_SLUICE_333", "acl[0]", `"connect:example.com"`},
		{"bad rule says the forms", http.MethodPost, "/credentials", `{"acl":["*","bind:"]}`, "ERR_SLUICE_333", "acl[1]", "bind:*.<domain>"},
		{"bad port", http.MethodPost, "/credentials", `{"acl":["bind:a.example.com:70000"]}`, "ERR_SLUICE_333", "acl[0]", "70000"},
		{"acl a string", http.MethodPost, "/credentials", `{"acl":"*"}`, "ERR_SLUICE_332", "acl", ""},
		{"owner not a bot id", http.MethodPost, "/credentials", `{"owner_id":"ak_1"}`, "ERR_SLUICE_333", "owner_id", "bot user"},
		{"owner of another account", http.MethodPost, "/credentials", `{"owner_id":"` + theirs.ID + `"}`, "ERR_SLUICE_333", "owner_id", "no bot user of the account"},
		{"description of 256 bytes", http.MethodPost, "/credentials", `{"description":"` + strings.Repeat("x", 256) + `"}`, "ERR_SLUICE_333", "description", "255 bytes"},
		{"metadata of 4097 bytes", http.MethodPost, "/credentials", `{"metadata":"` + strings.Repeat("x", 4097) + `"}`, "ERR_SLUICE_333", "metadata", "4096 bytes"},
		{"token at create", http.MethodPost, "/credentials", `{"token":"mine"}`, "ERR_SLUICE_331", "", ""},
		{"unknown field", http.MethodPatch, "/credentials/CR", `{"name":"x"}`, "ERR_SLUICE_331", "", ""},
		{"patch bad rule", http.MethodPatch, "/credentials/CR", `{"acl":["bind:*"]}`, "ERR_SLUICE_333", "acl[0]", `"bind:*"`},
		{"patch owner", http.MethodPatch, "/credentials/CR", `{"owner_id":"bot_2Ed2q8zQnGAqCS4LCCXyqqmNuQK"}`, "ERR_SLUICE_333", "owner_id", "no bot user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, out := e.call(t, e.token, tt.method, strings.Replace(tt.path, "CR", c.ID, 1), tt.body)
			if msg := wantError(t, resp, out, http.StatusBadRequest, tt.code, tt.field); !strings.Contains(msg, tt.says) {
				t.Fatalf("message %q does not say %q", msg, tt.says)
			}
		})
	}
	resp, out = e.call(t, e.token, http.MethodGet, "/credentials", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if !strings.Contains(string(out), `"acl":[]`) || strings.Count(string(out), `"id"`) != 1 {
		t.Fatalf("after refused calls: %s", out)
	}
}

// TestCredentialOwnerDeleted: deleting a bot user that owns credentials is
// a 409 naming them; once it owns none, it is deleted.
func TestCredentialOwnerDeleted(t *testing.T) {
	e := newTestEnv(t)
	bot := e.createBotUser(t, "agent")
	c := e.createCredential(t, `{"owner_id":"`+bot.ID+`"}`)
	resp, out := e.call(t, e.token, http.MethodDelete, "/bot_users/"+bot.ID, "")
	if msg := wantError(t, resp, out, http.StatusConflict, "ERR_SLUICE_426", ""); !strings.Contains(msg, c.ID) {
		t.Fatalf("the message does not name the credential: %s", msg)
	}
	if got := apitest.DecodeError(t, out).Details["credentials"]; got != `["`+c.ID+`"]` {
		t.Fatalf("details.credentials %v", got)
	}
	resp, out = e.call(t, e.token, http.MethodDelete, "/credentials/"+c.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
	resp, out = e.call(t, e.token, http.MethodDelete, "/bot_users/"+bot.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
}

// TestCredentialOfAnotherAccount: another account's credential is not
// found by any call, and its lists do not show it.
func TestCredentialOfAnotherAccount(t *testing.T) {
	e := newTestEnv(t)
	c := e.createCredential(t, `{"description":"mine"}`)
	other := e.otherAccountToken(t)
	for _, call := range []struct{ method, body string }{{http.MethodGet, ""}, {http.MethodPatch, `{"description":"theirs"}`}, {http.MethodDelete, ""}} {
		resp, out := e.call(t, other, call.method, "/credentials/"+c.ID, call.body)
		wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", "")
	}
	resp, out := e.call(t, other, http.MethodGet, "/credentials", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if !strings.HasPrefix(string(out), `{"credentials":[],`) {
		t.Fatalf("another account lists %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodGet, "/credentials/"+c.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[credential](t, out); got.Description != "mine" {
		t.Fatalf("after another account's calls: %s", out)
	}
}

// TestCredentialConcurrentPatch: PATCHes of different fields at once all
// stand: no update is lost.
func TestCredentialConcurrentPatch(t *testing.T) {
	e := newTestEnv(t)
	c := e.createCredential(t, `{}`)
	var wg sync.WaitGroup
	for _, body := range []string{`{"description":"d"}`, `{"metadata":"m"}`, `{"acl":["*"]}`} {
		wg.Go(func() {
			resp, out := e.call(t, e.token, http.MethodPatch, "/credentials/"+c.ID, body)
			if resp.StatusCode != http.StatusOK {
				t.Errorf("PATCH %s: %d %s", body, resp.StatusCode, out)
			}
		})
	}
	wg.Wait()
	resp, out := e.call(t, e.token, http.MethodGet, "/credentials/"+c.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[credential](t, out); got.Description != "d" || got.Metadata != "m" || len(got.ACL) != 1 {
		t.Fatalf("after concurrent patches: %s", out)
	}
}

// TestCredentialLimit: a create over the account's limit is a 409 naming
// the limit and the flag that raises it.
func TestCredentialLimit(t *testing.T) {
	e := newTestEnv(t, apitest.WithStoreConfig(store.Config{Limits: store.Limits{Credentials: 1}}))
	c := e.createCredential(t, `{}`)
	resp, out := e.call(t, e.token, http.MethodPost, "/credentials", `{}`)
	msg := wantError(t, resp, out, http.StatusConflict, "ERR_SLUICE_446", "")
	if body := apitest.DecodeError(t, out); body.Details["limit"] != store.LimitCredentials || body.Details["max"] != "1" ||
		!strings.Contains(msg, "DELETE /credentials/{id}") || !strings.Contains(msg, "--max-credentials") {
		t.Fatalf("over the limit: %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodDelete, "/credentials/"+c.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
	e.createCredential(t, `{}`)
}
