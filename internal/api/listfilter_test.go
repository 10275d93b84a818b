package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
)

// listFiltered lists path with ?filter= and the other query parameters
// more ("limit=7"), and returns the response and its body.
func (e *testEnv) listFiltered(t *testing.T, path, filter, more string) (*http.Response, []byte) {
	t.Helper()
	q := "?filter=" + url.QueryEscape(filter)
	if more != "" {
		q += "&" + more
	}
	return e.call(t, e.token, http.MethodGet, path+q, "")
}

// createdID posts body to path and returns the id of the resource made.
func (e *testEnv) createdID(t *testing.T, path, body string) string {
	t.Helper()
	resp, out := e.call(t, e.token, http.MethodPost, path, body)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	var made struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(out, &made); err != nil || made.ID == "" {
		t.Fatalf("POST %s: %s", path, out)
	}
	return made.ID
}

// TestListFilterFamilies lists each family with filters over its own
// fields, strings, lists, fields that may be null and nested objects, and
// checks that the page holds exactly the resources that match, newest
// first, and that resources of another account never show.
func TestListFilterFamilies(t *testing.T) {
	e := newTestEnv(t)
	destination := e.createdID(t, "/event_destinations", kinesisBody)
	withDescription := func(body, description string) string {
		return strings.Replace(body, `"description":"to kinesis"`, `"description":"`+description+`"`, 1)
	}
	subscription := func(description, kind string) string {
		return `{"description":"` + description + `","sources":[{"type":"` + kind + `"}],"destination_ids":["` + destination + `"]}`
	}
	for _, tc := range []struct {
		path, listKey string
		bodies        []string // created in this order
		filters       map[string][]int
	}{
		{"/api_keys", "keys", []string{`{"description":"prod-a"}`, `{"description":"dev"}`, `{"description":"prod-b","metadata":"m"}`}, map[string][]int{
			`obj.description.startsWith("prod")`:                       {0, 2},
			`obj.description.startsWith("prod") && obj.metadata == ""`: {0},
			`!has(obj.token) && obj.description != ""`:                 {0, 1, 2}, // shown once, null in lists
		}},
		{"/event_destinations", "event_destinations", []string{withDescription(kinesisBody, "prod-1"), withDescription(credsBody, "ignored"), withDescription(kinesisBody, "dev")}, map[string][]int{
			`obj.description == "prod-1" && obj.format == "json"`: {0},
			`obj.metadata.contains("ops")`:                        {0, 2}, // and the first destination, made above
		}},
		{"/event_subscriptions", "event_subscriptions", []string{subscription("prod", httpKind), subscription("dev", httpKind), subscription("prod", keyKind)}, map[string][]int{
			`obj.description == "prod" && obj.sources.exists(s, s.type == "` + httpKind + `")`:      {0},
			`obj.destinations.exists(d, d.id == "` + destination + `") && obj.description == "dev"`: {1},
		}},
		{"/bot_users", "bot_users", []string{`{"name":"prod-1"}`, `{"name":"dev"}`, `{"name":"prod-2"}`}, map[string][]int{
			`obj.name.startsWith("prod") && obj.active`: {0, 2},
			`obj.name.matches("^[a-z]+$")`:              {1},
		}},
		{"/credentials", "credentials", []string{`{"description":"a","acl":["bind:a.example.com"]}`, `{"acl":["*"]}`, `{"description":"c"}`}, map[string][]int{
			`"bind:a.example.com" in obj.acl`:                       {0},
			`obj.acl.size() == 0 && !has(obj.owner_id)`:             {2},
			`obj.acl.exists(r, r == "*") || obj.description == "c"`: {1, 2},
		}},
		{"/agent_ingresses", "ingresses", []string{
			`{"domain":"a.example.com","description":"prod","certificate_management_policy":{"authority":"letsencrypt","private_key_type":"ecdsa"}}`,
			`{"domain":"b.example.com","certificate_management_policy":{"authority":"letsencrypt","private_key_type":"rsa"}}`,
			`{"domain":"c.example.com","certificate_management_policy":null}`,
		}, map[string][]int{
			`obj.certificate_management_policy.private_key_type == "ecdsa"`:       {0},
			`!has(obj.certificate_management_policy)`:                             {2},
			`obj.domain.endsWith("example.com") && obj.region_domains.size() > 0`: {0, 1, 2},
		}},
		{"/reserved_domains", "reserved_domains", []string{`{"domain":"a.example.com","region":"eu"}`, `{"domain":"b.example.com"}`, `{"domain":"*.c.example.com"}`}, map[string][]int{
			`obj.region == "eu"`: {0},
			`!has(obj.region)`:   {1, 2},
			`obj.domain.startsWith("*.") && obj.certificate_management_policy.authority == "letsencrypt"`:     {2},
			`obj.created_at >= "2020-01-01" && timestamp(obj.created_at) < timestamp("2100-01-01T00:00:00Z")`: {0, 1, 2},
		}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			ids := make([]string, len(tc.bodies))
			for i, body := range tc.bodies {
				ids[i] = e.createdID(t, tc.path, body)
			}
			for filter, matching := range tc.filters {
				resp, out := e.listFiltered(t, tc.path, filter, "")
				apitest.WantStatus(t, resp, out, http.StatusOK)
				p := decodePage(t, out, tc.listKey)
				var want []string
				for _, i := range slices.Backward(matching) {
					want = append(want, ids[i])
				}
				got := slices.DeleteFunc(slices.Clone(p.items), func(id string) bool { return !slices.Contains(ids, id) })
				if !slices.Equal(got, want) {
					t.Errorf("%s: listed %v of the test's, want %v: %s", filter, got, want, out)
				}
				if p.uri != e.url+tc.path+"?filter="+url.QueryEscape(filter) || p.nextPageURI != nil {
					t.Errorf("%s: uri %s, next %v", filter, p.uri, p.nextPageURI)
				}
			}
		})
	}

	// Another account's key sees none of these.
	other := e.otherAccountToken(t)
	resp, out := e.call(t, other, http.MethodGet, "/bot_users?filter="+url.QueryEscape(`obj.name != ""`), "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if p := decodePage(t, out, "bot_users"); len(p.items) != 0 {
		t.Errorf("another account listed %v", p.items)
	}
}

// TestListFilterErrors: a filter that cannot be used is a 400
// ERR_SLUICE_335 naming the parameter, with each problem at its line and
// column, the fields of the family and a filter that works, and nothing
// is listed.
func TestListFilterErrors(t *testing.T) {
	e := newTestEnv(t)
	e.createBotUser(t, "bot")
	for _, tc := range []struct {
		name, path, filter string
		line, column       int
		says               []string
	}{
		{"unknown field", "/bot_users", `obj.nme == "bot"`, 1, 4, []string{"undefined field 'nme'", "id, uri, name, active, created_at", `obj.name.startsWith("prod")`}},
		{"unknown field of the three", "/api_keys", `obj.descripton.startsWith("prod")`, 1, 4, []string{"undefined field 'descripton'", "id, uri, description, metadata, created_at, token", `obj.description.startsWith("prod")`}},
		{"unknown nested field", "/reserved_domains", `obj.certificate_management_policy.authorty == "x"`, 1, 34, []string{"undefined field 'authorty'"}},
		{"not a boolean", "/bot_users", `obj.name`, 1, 1, []string{"must be a boolean expression, this one is string"}},
		{"syntax error", "/bot_users", "obj.active &&\n  obj.name ==", 2, 14, []string{"<input>:2:14", "Syntax error"}},
		{"wrong type", "/credentials", `obj.acl == "*"`, 1, 9, []string{"no matching overload"}},
		{"null", "/reserved_domains", `obj.region == null`, 1, 12, []string{"!has(obj.region)"}},
		{"the event's variable", "/event_subscriptions", `ev.conn.server_port == 443`, 1, 1, []string{"undeclared reference to 'ev'"}},
		{"too costly", "/credentials", `obj.acl.all(a, obj.acl.all(b, a != b + obj.description))`, 0, 0, []string{"above the limit of 25000"}},
		{"too long", "/bot_users", `obj.name == "` + strings.Repeat("a", 4096) + `"`, 0, 0, []string{"at most 4096 bytes"}},
		{"empty", "/agent_ingresses", ``, 0, 0, []string{"must not be empty"}},
		{"regex computed", "/event_destinations", `obj.description.matches(obj.metadata)`, 1, 28, []string{"must be a constant string"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, out := e.listFiltered(t, tc.path, tc.filter, "")
			msg := wantError(t, resp, out, http.StatusBadRequest, "ERR_SLUICE_335", "")
			for _, s := range tc.says {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q does not say %q", msg, s)
				}
			}
			body := apitest.DecodeError(t, out)
			issues := apitest.DetailJSON[[]any](t, body, "issues")
			if body.Details["parameter"] != "filter" || len(issues) == 0 {
				t.Fatalf("details %v", body.Details)
			}
			first, _ := issues[0].(map[string]any)
			if first["line"] != float64(tc.line) || first["column"] != float64(tc.column) || first["message"] == "" {
				t.Errorf("first issue %v, want at %d:%d", first, tc.line, tc.column)
			}
		})
	}
	resp, out := e.call(t, e.token, http.MethodGet, "/bot_users?filter=true&filter=false", "")
	if msg := wantError(t, resp, out, http.StatusBadRequest, "ERR_SLUICE_335", ""); !strings.Contains(msg, "give one filter") {
		t.Errorf("two filters: %s", msg)
	}
	// The other parameters are checked first.
	resp, out = e.call(t, e.token, http.MethodGet, "/bot_users?limit=0&filter=nope", "")
	wantError(t, resp, out, http.StatusBadRequest, "ERR_SLUICE_334", "")
}

// TestListFilterFailed: a filter that fails on a resource at evaluation
// is a 400 ERR_SLUICE_336 naming the resource, not a 500; on a list where
// it never fails, it answers.
func TestListFilterFailed(t *testing.T) {
	e := newTestEnv(t)
	resp, out := e.listFiltered(t, "/credentials", `obj.acl[1] == "*"`, "")
	apitest.WantStatus(t, resp, out, http.StatusOK) // nothing to evaluate it on
	short := e.createdID(t, "/credentials", `{"acl":["*"]}`)
	for _, filter := range []string{`obj.acl[1] == "*"`, `1 / (obj.acl.size() - 1) == 1`} {
		resp, out = e.listFiltered(t, "/credentials", filter, "")
		msg := wantError(t, resp, out, http.StatusBadRequest, "ERR_SLUICE_336", "")
		if body := apitest.DecodeError(t, out); body.Details["id"] != short || body.Details["parameter"] != "filter" || !strings.Contains(msg, short) {
			t.Errorf("%s: %s", filter, out)
		}
	}
	resp, out = e.listFiltered(t, "/credentials", `obj.acl.size() > 1 && obj.acl[1] == "*"`, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
}

// TestListFilterPaging pages 7 at a time through 250 bot users with a
// filter that one in five match: each page holds 7 that match (fewer on
// the last), next_page_uri carries the filter, and the pages hold each
// match once, newest first.
func TestListFilterPaging(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 250 bot users")
	}
	t.Parallel()
	const limit = 7
	e := newTestEnv(t, apitest.WithStoreConfig(store.Config{Limits: store.Limits{BotUsers: pagedCount}}))
	var want []string
	for i := range pagedCount {
		b, err := e.store.CreateBotUser(t.Context(), e.account, store.BotUser{Name: fmt.Sprintf("bot-%03d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if i%5 == 0 {
			want = append(want, b.ID)
		}
	}
	slices.Reverse(want)
	const filter = `obj.name.endsWith("0") || obj.name.endsWith("5")`
	var got []string
	next := e.url + "/bot_users?filter=" + url.QueryEscape(filter) + "&limit=" + strconv.Itoa(limit)
	for pages := 1; ; pages++ {
		if pages > pagedCount {
			t.Fatalf("still paging after %d pages", pages)
		}
		resp, out := e.call(t, e.token, http.MethodGet, strings.TrimPrefix(next, e.url), "")
		apitest.WantStatus(t, resp, out, http.StatusOK)
		p := decodePage(t, out, "bot_users")
		got = append(got, p.items...)
		if p.nextPageURI == nil {
			break
		}
		u, err := url.Parse(*p.nextPageURI)
		if err != nil || len(p.items) != limit || u.Query().Get("filter") != filter ||
			u.Query().Get("before_id") != p.items[len(p.items)-1] || u.Query().Get("limit") != strconv.Itoa(limit) {
			t.Fatalf("page %d: %d items, next_page_uri %v", pages, len(p.items), *p.nextPageURI)
		}
		next = *p.nextPageURI
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paged through %d bot users, want the %d that match, newest first, each once", len(got), len(want))
	}
}

// TestListFilterNeverFails sends filters made by mutating good ones to
// every family's list, with resources to evaluate them on: each answers
// 200 or 400 with a filter error code, never a 500, and the server keeps
// answering.
func TestListFilterNeverFails(t *testing.T) {
	e := newTestEnv(t)
	e.createBotUser(t, "bot")
	e.createdID(t, "/credentials", `{"acl":["*","bind:a.example.com"],"description":"d"}`)
	e.createdID(t, "/reserved_domains", `{"domain":"*.x.example.com","region":"eu"}`)
	e.createdID(t, "/agent_ingresses", `{"domain":"x.example.com"}`)
	e.createdID(t, "/event_destinations", kinesisBody)
	seeds := []string{
		`obj.description.startsWith("prod")`, `obj.acl[0] == "*"`, `obj.certificate_management_policy.authority == "letsencrypt"`,
		`obj.name.matches("^b")`, `has(obj.region) && obj.region == "eu"`, `timestamp(obj.created_at) > timestamp("2020-01-01T00:00:00Z")`,
		`obj.region_domains.exists(d, d.endsWith(".test"))`, `size(obj.id) / 0 == 1`, `obj.target == obj.target`, `[1,2,3].map(x, x * 2)[5] == 1`,
	}
	pieces := []string{"obj", ".", "(", ")", "[", "]", `"`, "'", "&&", "||", "!", "==", "null", "has(", "size(", "0", "-1", "9223372036854775807",
		".all(x, ", ".exists(x, ", "x", "\\", "\n", "é", "\x00", "int(", "timestamp(", "duration(", "/", "%", "?", ":", "{", "}", ","}
	rng := rand.New(rand.NewPCG(14, 335))
	paths := []string{"/api_keys", "/event_destinations", "/event_subscriptions", "/bot_users", "/credentials", "/agent_ingresses", "/reserved_domains"}
	for i := range 300 {
		filter := seeds[rng.IntN(len(seeds))]
		for range rng.IntN(4) {
			at := rng.IntN(len(filter) + 1)
			switch rng.IntN(3) {
			case 0:
				filter = filter[:at] + pieces[rng.IntN(len(pieces))] + filter[at:]
			case 1:
				if at < len(filter) {
					filter = filter[:at] + filter[at+1:]
				}
			default:
				filter = filter[:at] + seeds[rng.IntN(len(seeds))] + filter[at:]
			}
		}
		path := paths[i%len(paths)]
		resp, out := e.listFiltered(t, path, filter, "")
		switch resp.StatusCode {
		case http.StatusOK:
		case http.StatusBadRequest:
			if code := apitest.DecodeError(t, out).ErrorCode; code != "ERR_SLUICE_335" && code != "ERR_SLUICE_336" {
				t.Errorf("%s?filter=%q: %s", path, filter, out)
			}
		default:
			t.Fatalf("%s?filter=%q: status %d: %s", path, filter, resp.StatusCode, out)
		}
	}
}

// TestUnfilteredLists: the lists that are not a family's refuse a filter
// rather than answer unfiltered.
func TestUnfilteredLists(t *testing.T) {
	e := newTestEnv(t, apitest.WithDeps(func(deps *api.Deps, js jetstream.JetStream) {
		stream, err := js.Stream(context.Background(), pipeline.EventsStream)
		if err != nil {
			t.Fatal(err)
		}
		deps.Replays = pipeline.NewReplayer(stream, deps.Subscriptions.(*store.Store).Replays(), deps.Subscriptions)
	}))
	destination := e.createdID(t, "/event_destinations", kinesisBody)
	subscription := e.createdID(t, "/event_subscriptions", `{"sources":[{"type":"`+httpKind+`"}],"destination_ids":["`+destination+`"]}`)
	letters := newDeadLetterEnv(t)
	lettersOf := letters.createdID(t, "/event_destinations", kinesisBody)
	for _, c := range []struct {
		e    *testEnv
		path string
	}{
		{letters.testEnv, "/event_destinations/" + lettersOf + "/dead_letters"},
		{e, "/event_subscriptions/" + subscription + "/replays"},
		{e, "/event_subscriptions/" + subscription + "/sources"},
	} {
		e, path := c.e, c.path
		resp, out := e.listFiltered(t, path, "true", "")
		if msg := wantError(t, resp, out, http.StatusBadRequest, "ERR_SLUICE_335", ""); !strings.Contains(msg, "takes no ?filter=") {
			t.Errorf("%s: %s", path, msg)
		}
	}
}
