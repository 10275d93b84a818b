package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/store"
)

// pagedCount is how many resources of each kind TestPaging pages through.
const pagedCount = 250

// page is a page of any list of the API.
type page struct {
	items       []string // the ids, in the order listed
	uri         string
	nextPageURI *string
}

// decodePage decodes a page whose items are in the field listKey.
func decodePage(t *testing.T, body []byte, listKey string) page {
	t.Helper()
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatalf("page %s: %v", body, err)
	}
	var (
		p     page
		items []struct {
			ID string `json:"id"`
		}
	)
	for key, into := range map[string]any{listKey: &items, "uri": &p.uri, "next_page_uri": &p.nextPageURI} {
		if _, ok := raw[key]; !ok {
			t.Fatalf("page without %s: %.300s", key, body)
		}
		if err := json.Unmarshal(raw[key], into); err != nil {
			t.Fatalf("page %s: %s: %v", body, key, err)
		}
	}
	for _, item := range items {
		p.items = append(p.items, item.ID)
	}
	return p
}

// TestPaging pages through 250 resources of each kind with several
// limits: each resource comes once, newest first (by id), each page's uri
// is the full URL asked for, next_page_uri is the full URL of the next page
// and null after the last, and no resource of another account shows.
func TestPaging(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 250 resources of each kind")
	}
	t.Parallel()
	// More of each than one account may have by default, to page through.
	e := newTestEnv(t, apitest.WithStoreConfig(store.Config{Limits: store.Limits{Destinations: 2 * pagedCount, APIKeys: 2 * pagedCount, Credentials: 2 * pagedCount}}))
	ctx := t.Context()
	other, err := e.store.CreateAccount(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	destination := store.Destination{Target: store.Target{Kinesis: &store.KinesisTarget{
		Auth:      store.AWSAuth{Role: &store.AWSRole{RoleARN: testRoleARN}},
		StreamARN: testStreamARN,
	}}}
	kinds := []struct {
		path, listKey string
		create        func(account string) (string, error)
		existing      []string // resources made before the test's
	}{
		{"/event_destinations", "event_destinations", func(account string) (string, error) {
			d, err := e.store.CreateDestination(ctx, account, destination)
			return d.ID, err
		}, nil},
		{"/event_subscriptions", "event_subscriptions", func(account string) (string, error) {
			sub, err := e.store.CreateSubscription(ctx, account, store.Subscription{Sources: []store.Source{{Type: httpKind}}})
			return sub.ID, err
		}, nil},
		{"/api_keys", "keys", func(account string) (string, error) {
			k, err := e.store.CreateAPIKey(ctx, account, store.APIKeyInput{}, "")
			return k.ID, err
		}, []string{e.keyID}},
		{"/credentials", "credentials", func(account string) (string, error) {
			c, err := e.store.CreateCredential(ctx, account, store.Credential{})
			return c.ID, err
		}, nil},
	}
	for _, kind := range kinds {
		t.Run(kind.path, func(t *testing.T) {
			want := slices.Clone(kind.existing)
			for range pagedCount {
				id, err := kind.create(e.account)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, id)
			}
			if _, err := kind.create(other.ID); err != nil {
				t.Fatal(err)
			}
			slices.Sort(want)
			slices.Reverse(want)

			for _, limit := range []int{7, 100} {
				got := pageThrough(t, e, kind.path, kind.listKey, limit)
				if !slices.Equal(got, want) {
					t.Fatalf("limit %d: listed %d ids, want the %d of the account, newest first, each once", limit, len(got), len(want))
				}
			}
			// Without a limit, a page holds 100.
			resp, out := e.call(t, e.token, http.MethodGet, kind.path, "")
			apitest.WantStatus(t, resp, out, http.StatusOK)
			p := decodePage(t, out, kind.listKey)
			if !slices.Equal(p.items, want[:100]) || p.uri != e.url+kind.path || p.nextPageURI == nil {
				t.Fatalf("default page: %d items, uri %s, next %v", len(p.items), p.uri, p.nextPageURI)
			}
		})
	}
}

// pageThrough lists path limit at a time, following next_page_uri, checks
// each page, and returns the ids listed.
func pageThrough(t *testing.T, e *testEnv, path, listKey string, limit int) []string {
	t.Helper()
	var got []string
	next := e.url + path + "?limit=" + strconv.Itoa(limit)
	for pages := 1; ; pages++ {
		if pages > pagedCount+2 {
			t.Fatalf("still paging after %d pages", pages)
		}
		resp, out := e.call(t, e.token, http.MethodGet, strings.TrimPrefix(next, e.url), "")
		apitest.WantStatus(t, resp, out, http.StatusOK)
		p := decodePage(t, out, listKey)
		if p.uri != next {
			t.Fatalf("page %d: uri %s, want %s", pages, p.uri, next)
		}
		got = append(got, p.items...)
		if p.nextPageURI == nil {
			if len(p.items) > limit {
				t.Fatalf("last page %d: %d items, over the limit %d", pages, len(p.items), limit)
			}
			return got
		}
		if len(p.items) != limit {
			t.Fatalf("page %d: %d items and a next page, want %d", pages, len(p.items), limit)
		}
		u, err := url.Parse(*p.nextPageURI)
		if err != nil || u.Scheme+"://"+u.Host != e.url || u.Path != path ||
			u.Query().Get("limit") != strconv.Itoa(limit) || u.Query().Get("before_id") != p.items[len(p.items)-1] {
			t.Fatalf("page %d: next_page_uri %s, want %s%s?limit=%d&before_id=%s", pages, *p.nextPageURI, e.url, path, limit, p.items[len(p.items)-1])
		}
		next = *p.nextPageURI
	}
}
