package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/apiconv"
	declared "github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/producer"
)

// TestListBodyBytes checks that a page written as a client.Page has the bytes
// of the struct each family wrote before: the key, uri and next_page_uri
// in order, an empty page as [], and '&', '<' and '>' unescaped as in the
// rest of a body.
func TestListBodyBytes(t *testing.T) {
	type item struct {
		ID string `json:"id"`
	}
	type before struct {
		Items       []item  `json:"api_keys"`
		URI         string  `json:"uri"`
		NextPageURI *string `json:"next_page_uri"`
	}
	next := "http://h/api_keys?before_id=a&limit=1"
	for _, c := range []struct {
		name  string
		items []item
		next  *string
	}{
		{"last page", []item{{"<a&b>"}, {"c"}}, nil},
		{"next page", []item{{"a"}}, &next},
		{"empty", []item{}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := httptest.NewRecorder()
			apiconv.WriteJSON(got, 200, apiwire.Page[item]{Key: "api_keys", Items: c.items, URI: "http://h/api_keys?x=<&>", NextPageURI: c.next})
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(before{Items: c.items, URI: "http://h/api_keys?x=<&>", NextPageURI: c.next}); err != nil {
				t.Fatal(err)
			}
			if got.Body.String() != want.String() {
				t.Errorf("page:\n got %s\nwant %s", got.Body, want.String())
			}
		})
	}
}

// TestReadOnlyFamily checks that a family without create and update is
// served list, get and delete only: POST and PATCH are 405 naming the
// methods the paths take, and its document has no create or update body.
func TestReadOnlyFamily(t *testing.T) {
	var st *store.Store // never called: the requests end before the store
	s, err := New(Config{BaseURL: "http://sluice.test"}, Deps{Keys: st, Publisher: (*producer.Producer)(nil)})
	if err != nil {
		t.Fatal(err)
	}
	route(s, family[store.BotUser, noBody, noBody, apiwire.BotUser]{
		spec: declared.Spec{Prefix: "bot_", Path: "/read_only", ListKey: "read_only"},
		res:  resource{noun: "read-only thing", listPath: "/read_only"},
		get:  st.GetBotUser, list: st.ListBotUsers, delete: st.DeleteBotUser,
	})
	doc := s.families[len(s.families)-1]
	if doc.path != "/read_only" || doc.create != nil || doc.update != nil || doc.body != reflect.TypeFor[apiwire.BotUser]() {
		t.Fatalf("documented %+v", doc)
	}
	for _, c := range []struct{ method, path, allow string }{
		{http.MethodPost, "/read_only", "GET"},
		{http.MethodPatch, "/read_only/bot_1", "GET, DELETE"},
	} {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(c.method, c.path, strings.NewReader("{}")))
		if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != c.allow {
			t.Errorf("%s %s: %d, Allow %q; want 405, Allow %q: %s", c.method, c.path, w.Code, w.Header().Get("Allow"), c.allow, w.Body)
		}
	}
}

// TestFamilyMustBeItsDeclaration: a family routed at a path other than
// its declaration's is a mistake in the code, which route refuses.
func TestFamilyMustBeItsDeclaration(t *testing.T) {
	var st *store.Store
	s, err := New(Config{BaseURL: "http://sluice.test"}, Deps{Keys: st, Publisher: (*producer.Producer)(nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "is declared at /bot_users") {
			t.Fatalf("route of a family not at its declaration's path: recovered %v, want a panic naming both", r)
		}
	}()
	route(s, family[store.BotUser, noBody, noBody, apiwire.BotUser]{
		spec: declared.BotUsers(),
		res:  resource{noun: "misplaced thing", listPath: "/misplaced"},
		get:  st.GetBotUser, list: st.ListBotUsers,
	})
}
