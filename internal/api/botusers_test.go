package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/store"
)

// botUser is a bot user as the API returns it.
type botUser struct {
	ID        string `json:"id"`
	URI       string `json:"uri"`
	Name      string `json:"name"`
	Active    bool   `json:"active"`
	CreatedAt string `json:"created_at"`
}

type botUserList struct {
	BotUsers    []botUser `json:"bot_users"`
	URI         string    `json:"uri"`
	NextPageURI *string   `json:"next_page_uri"`
}

// createBotUser creates a bot user named name.
func (e *testEnv) createBotUser(t *testing.T, name string) botUser {
	t.Helper()
	resp, out := e.call(t, e.token, http.MethodPost, "/bot_users", string(apitest.MustJSON(t, map[string]string{"name": name})))
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	return apitest.DecodeAs[botUser](t, out)
}

func TestBotUserRoundTrip(t *testing.T) {
	e := newTestEnv(t)
	created := e.createBotUser(t, "deploy-robot")
	if !strings.HasPrefix(created.ID, "bot_") || created.URI != e.url+"/bot_users/"+created.ID || created.Name != "deploy-robot" ||
		!created.Active || !strings.HasSuffix(created.CreatedAt, "Z") {
		t.Fatalf("created %+v", created)
	}
	resp, out := e.call(t, e.token, http.MethodGet, "/bot_users/"+created.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[botUser](t, out); got != created {
		t.Fatalf("got %+v, want %+v", got, created)
	}
	// The body's fields, in the specification's order.
	if want := fmt.Sprintf(`{"id":%q,"uri":%q,"name":"deploy-robot","active":true,"created_at":%q}`+"\n", created.ID, created.URI, created.CreatedAt); string(out) != want {
		t.Fatalf("body\n %s\nwant\n %s", out, want)
	}

	resp, out = e.call(t, e.token, http.MethodPatch, "/bot_users/"+created.ID, `{"active":false}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[botUser](t, out); got.Active || got.Name != "deploy-robot" {
		t.Fatalf("deactivated %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodPatch, "/bot_users/"+created.ID, `{"name":"Deploy-Robot"}`)
	apitest.WantStatus(t, resp, out, http.StatusOK) // its own name, in other case
	if got := apitest.DecodeAs[botUser](t, out); got.Active || got.Name != "Deploy-Robot" {
		t.Fatalf("renamed %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodPatch, "/bot_users/"+created.ID, `{"name":"ci","active":true}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[botUser](t, out); !got.Active || got.Name != "ci" || got.ID != created.ID || got.CreatedAt != created.CreatedAt {
		t.Fatalf("patched %s", out)
	}

	resp, out = e.call(t, e.token, http.MethodDelete, "/bot_users/"+created.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
	if len(out) != 0 {
		t.Fatalf("delete answered a body: %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodGet, "/bot_users/"+created.ID, "")
	wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", "")
	resp, out = e.call(t, e.token, http.MethodDelete, "/bot_users/"+created.ID, "")
	wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", "")

	// Bot users have no audit event kinds: none of these changes emitted one.
	if events := e.storedEvents(t, e.account); len(events) != 0 {
		t.Fatalf("bot users' changes stored %d events, want none: %s", len(events), events[0].raw)
	}
}

// TestBotUserList: pages of bot users are newest first, under bot_users,
// with the next page's full URL and null after the last.
func TestBotUserList(t *testing.T) {
	e := newTestEnv(t)
	resp, out := e.call(t, e.token, http.MethodGet, "/bot_users", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if want := `{"bot_users":[],"uri":"` + e.url + `/bot_users","next_page_uri":null}` + "\n"; string(out) != want {
		t.Fatalf("empty list %s, want %s", out, want)
	}
	var made []botUser
	for i := range 3 {
		made = append(made, e.createBotUser(t, fmt.Sprintf("bot-%d", i)))
	}
	resp, out = e.call(t, e.token, http.MethodGet, "/bot_users?limit=2", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	first := apitest.DecodeAs[botUserList](t, out)
	if len(first.BotUsers) != 2 || first.BotUsers[0] != made[2] || first.BotUsers[1] != made[1] || first.URI != e.url+"/bot_users?limit=2" ||
		first.NextPageURI == nil || *first.NextPageURI != e.url+"/bot_users?before_id="+made[1].ID+"&limit=2" {
		t.Fatalf("first page %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodGet, strings.TrimPrefix(*first.NextPageURI, e.url), "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if last := apitest.DecodeAs[botUserList](t, out); len(last.BotUsers) != 1 || last.BotUsers[0] != made[0] || last.NextPageURI != nil {
		t.Fatalf("last page %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodGet, "/bot_users?before_id=ed_1", "")
	wantError(t, resp, out, http.StatusBadRequest, "ERR_SLUICE_334", "")
}

// TestBotUserNameTaken: a name another bot user of the account has,
// ignoring case, is a 409 naming the field, at create and at rename; the
// same name in another account is free.
func TestBotUserNameTaken(t *testing.T) {
	e := newTestEnv(t)
	e.createBotUser(t, "Deploy")
	second := e.createBotUser(t, "ci")
	resp, out := e.call(t, e.token, http.MethodPost, "/bot_users", `{"name":"deploy"}`)
	if msg := wantError(t, resp, out, http.StatusConflict, "ERR_SLUICE_425", "name"); !strings.Contains(msg, `"deploy"`) {
		t.Fatalf("the message does not name the name: %s", msg)
	}
	resp, out = e.call(t, e.token, http.MethodPatch, "/bot_users/"+second.ID, `{"name":"DEPLOY"}`)
	wantError(t, resp, out, http.StatusConflict, "ERR_SLUICE_425", "name")
	resp, out = e.call(t, e.token, http.MethodGet, "/bot_users/"+second.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[botUser](t, out); got.Name != "ci" {
		t.Fatalf("a refused rename changed the bot user: %s", out)
	}

	other := e.otherAccountToken(t)
	resp, out = e.call(t, other, http.MethodPost, "/bot_users", `{"name":"deploy"}`)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
}

// TestBotUserOfAnotherAccount: another account's bot user is not found by
// any call, and its lists do not show it.
func TestBotUserOfAnotherAccount(t *testing.T) {
	e := newTestEnv(t)
	bot := e.createBotUser(t, "mine")
	other := e.otherAccountToken(t)
	for _, c := range []struct{ method, body string }{{http.MethodGet, ""}, {http.MethodPatch, `{"active":false}`}, {http.MethodDelete, ""}} {
		resp, out := e.call(t, other, c.method, "/bot_users/"+bot.ID, c.body)
		wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", "")
	}
	resp, out := e.call(t, other, http.MethodGet, "/bot_users", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if n := len(apitest.DecodeAs[botUserList](t, out).BotUsers); n != 0 {
		t.Fatalf("another account lists %d bot users: %s", n, out)
	}
	resp, out = e.call(t, e.token, http.MethodGet, "/bot_users/"+bot.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[botUser](t, out); got != bot {
		t.Fatalf("after another account's calls: %s", out)
	}
}

func TestBotUserValidation(t *testing.T) {
	e := newTestEnv(t)
	bot := e.createBotUser(t, "b")
	tests := []struct {
		name, method, path, body, code, field string
	}{
		{"no name", http.MethodPost, "/bot_users", `{}`, "ERR_SLUICE_333", "name"},
		{"empty name", http.MethodPost, "/bot_users", `{"name":""}`, "ERR_SLUICE_333", "name"},
		{"name of 256 bytes", http.MethodPost, "/bot_users", `{"name":"` + strings.Repeat("é", 128) + `"}`, "ERR_SLUICE_333", "name"},
		{"control character", http.MethodPost, "/bot_users", `{"name":"a\u0007b"}`, "ERR_SLUICE_333", "name"},
		{"active at create", http.MethodPost, "/bot_users", `{"name":"x","active":false}`, "ERR_SLUICE_331", ""},
		{"name a number", http.MethodPost, "/bot_users", `{"name":1}`, "ERR_SLUICE_332", "name"},
		{"rename empty", http.MethodPatch, "/bot_users/BOT", `{"name":""}`, "ERR_SLUICE_333", "name"},
		{"active a string", http.MethodPatch, "/bot_users/BOT", `{"active":"yes"}`, "ERR_SLUICE_332", "active"},
		{"unknown field", http.MethodPatch, "/bot_users/BOT", `{"description":"x"}`, "ERR_SLUICE_331", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, out := e.call(t, e.token, tt.method, strings.Replace(tt.path, "BOT", bot.ID, 1), tt.body)
			wantError(t, resp, out, http.StatusBadRequest, tt.code, tt.field)
		})
	}
	resp, out := e.call(t, e.token, http.MethodGet, "/bot_users", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if bots := apitest.DecodeAs[botUserList](t, out).BotUsers; len(bots) != 1 || bots[0] != bot {
		t.Fatalf("after refused calls, bot users are %s", out)
	}
	// 255 bytes, in characters of two bytes, are within the limit.
	if name := "b" + strings.Repeat("é", 127); e.createBotUser(t, name).Name != name {
		t.Fatal("a name of 255 bytes was changed")
	}
}

// TestBotUserLimit: a create over the account's limit of bot users is a
// 409 that names the limit and the flag that raises it, as the other
// limits are; deleting one makes room.
func TestBotUserLimit(t *testing.T) {
	e := newTestEnv(t, apitest.WithStoreConfig(store.Config{Limits: store.Limits{BotUsers: 1}}))
	bot := e.createBotUser(t, "one")
	resp, out := e.call(t, e.token, http.MethodPost, "/bot_users", `{"name":"two"}`)
	msg := wantError(t, resp, out, http.StatusConflict, "ERR_SLUICE_445", "")
	if body := apitest.DecodeError(t, out); body.Details["limit"] != store.LimitBotUsers || body.Details["max"] != "1" ||
		!strings.Contains(msg, "limit of 1 bot users") || !strings.Contains(msg, "DELETE /bot_users/{id}") || !strings.Contains(msg, "--max-bot-users") {
		t.Fatalf("over the bot users limit: %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodDelete, "/bot_users/"+bot.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
	e.createBotUser(t, "two")
}

// otherAccountToken returns the token of a key of a new account.
func (e *testEnv) otherAccountToken(t *testing.T) string {
	t.Helper()
	other, err := e.store.CreateAccount(t.Context(), "other")
	if err != nil {
		t.Fatal(err)
	}
	key, err := e.store.CreateAPIKey(t.Context(), other.ID, store.APIKeyInput{Description: "other"}, "")
	if err != nil {
		t.Fatal(err)
	}
	return key.Token
}
