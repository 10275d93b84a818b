package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestTailDestinationKindsPages: the subscriptions that tell a
// destination's kinds are read page by page as list --all reads them: a
// subscription on a later page counts, and an API that gives the same
// next_page_uri twice is an error, not a silently partial list.
func TestTailDestinationKindsPages(t *testing.T) {
	clearSluiceEnv(t)
	const dest = "ed_3MUSoGsHjjU4QKWkisrUnnfCK1R"
	for name, tt := range map[string]struct {
		lastNext string // next_page_uri of the second page
		want     string
	}{
		"two pages":       {"null", "does not fit events of api_key_created.v0, which subscription es_2"},
		"a repeated page": {`"http://api.example/event_subscriptions?limit=100&before_id=es_1"`, "next_page_uri http://api.example/event_subscriptions?limit=100&before_id=es_1 twice"},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				switch {
				case r.URL.Path == "/event_destinations/"+dest:
					_, _ = io.WriteString(w, `{"id":"`+dest+`","target":{"kinesis":{"stream_arn":"arn:aws:kinesis:us-east-1:123456789012:stream/s"}}}`)
				case r.URL.Path == "/event_subscriptions" && r.URL.Query().Get("before_id") == "":
					_, _ = io.WriteString(w, `{"event_subscriptions":[{"id":"es_1","destinations":[{"id":"ed_other"}],"sources":[{"type":"api_key_created.v0"}]}],`+
						`"uri":"/event_subscriptions","next_page_uri":"http://api.example/event_subscriptions?limit=100&before_id=es_1"}`)
				case r.URL.Path == "/event_subscriptions":
					_, _ = io.WriteString(w, `{"event_subscriptions":[{"id":"es_2","destinations":[{"id":"`+dest+`"}],"sources":[{"type":"api_key_created.v0"}]}],`+
						`"uri":"/event_subscriptions?before_id=es_1","next_page_uri":`+tt.lastNext+`}`)
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			_, _, err := runSluice(t, "", "tail", dest, "--follow=false", "--filter", "ev.conn.server_port == 443", "--api-url", srv.URL, "--api-key", "sk_test")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("tail %s --filter: %v, want an error saying %q", dest, err, tt.want)
			}
		})
	}
}
