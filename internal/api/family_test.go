package api

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/sluicehq/sluice/client"
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
			writeJSON(got, 200, client.Page[item]{Key: "api_keys", Items: c.items, URI: "http://h/api_keys?x=<&>", NextPageURI: c.next})
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
