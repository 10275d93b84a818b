package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/apitest"
)

// TestBodiesRepeatThePath: the body of every family's PATCH may repeat
// the path's id, as the official API clients' update types carry it (a
// route's edge_id, a source's subscription_id and type too), and so may
// a create its parent's id; a value other than the path's is refused,
// naming the field and both values, and changes nothing.
func TestBodiesRepeatThePath(t *testing.T) {
	e := newTestEnv(t)
	dest := e.createdID(t, "/event_destinations", kinesisBody)
	sub := e.createdID(t, "/event_subscriptions", `{"sources":[{"type":"`+httpKind+`"}],"destination_ids":["`+dest+`"]}`)
	edge := e.createdID(t, "/edges/https", `{"description":"e"}`)
	routes := "/edges/https/" + edge + "/routes"
	route := e.createdID(t, routes, `{"edge_id":"`+edge+`","match_type":"path_prefix","match":"/"}`)
	source := "/event_subscriptions/" + sub + "/sources/" + httpKind

	tests := []struct {
		name, path, member, value, change string
	}{
		{"api key", "/api_keys/" + e.createKey(t, `{}`).ID, "id", "", `"description":"d"`},
		{"bot user", "/bot_users/" + e.createdID(t, "/bot_users", `{"name":"b"}`), "id", "", `"name":"b2"`},
		{"credential", "/credentials/" + e.createdID(t, "/credentials", `{"acl":["*"]}`), "id", "", `"description":"d"`},
		{"reserved domain", "/reserved_domains/" + e.createdID(t, "/reserved_domains", `{"domain":"*.x.example.com"}`), "id", "", `"description":"d"`},
		{"agent ingress", "/agent_ingresses/" + e.createdID(t, "/agent_ingresses", `{"domain":"x.example.com"}`), "id", "", `"description":"d"`},
		{"destination", "/event_destinations/" + dest, "id", dest, `"description":"d"`},
		{"subscription", "/event_subscriptions/" + sub, "id", sub, `"description":"d"`},
		{"https edge", "/edges/https/" + edge, "id", edge, `"description":"d"`},
		{"route", routes + "/" + route, "id", route, `"description":"d"`},
		{"route's edge", routes + "/" + route, "edge_id", edge, `"description":"d2"`},
		{"source's subscription", source, "subscription_id", sub, `"filter":"ev.conn.server_port == 443"`},
		{"source's type", source, "type", httpKind, `"filter":"ev.conn.server_port == 80"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			value := tt.value
			if value == "" {
				value = tt.path[strings.LastIndex(tt.path, "/")+1:]
			}
			before, out := e.call(t, e.token, http.MethodGet, tt.path, "")
			apitest.WantStatus(t, before, out, http.StatusOK)

			other := "x" + value
			resp, refused := e.call(t, e.token, http.MethodPatch, tt.path, fmt.Sprintf(`{%q:%q,%s}`, tt.member, other, tt.change))
			msg := wantError(t, resp, refused, http.StatusBadRequest, "ERR_SLUICE_340", tt.member)
			if !strings.Contains(msg, fmt.Sprintf("%q is %q, but the path names %q", tt.member, other, value)) || !strings.Contains(msg, "leave the field out") {
				t.Fatalf("the message does not name the field and both values: %s", msg)
			}
			resp, after := e.call(t, e.token, http.MethodGet, tt.path, "")
			apitest.WantStatus(t, resp, after, http.StatusOK)
			if string(after) != string(out) {
				t.Fatalf("a refused PATCH changed the resource:\n%s\n%s", out, after)
			}

			resp, wrongType := e.call(t, e.token, http.MethodPatch, tt.path, fmt.Sprintf(`{%q:1}`, tt.member))
			wantError(t, resp, wrongType, http.StatusBadRequest, "ERR_SLUICE_332", tt.member)

			resp, out = e.call(t, e.token, http.MethodPatch, tt.path, fmt.Sprintf(`{%q:%q,%s}`, tt.member, value, tt.change))
			apitest.WantStatus(t, resp, out, http.StatusOK)
			if !strings.Contains(string(out), strings.Trim(tt.change[strings.Index(tt.change, ":")+1:], `"`)) {
				t.Fatalf("the PATCH repeating the path did not change the resource: %s", out)
			}
		})
	}

	// A route's create may repeat the path's edge, and no other.
	resp, out := e.call(t, e.token, http.MethodPost, routes, `{"edge_id":"edghts_other","match_type":"path_prefix","match":"/b"}`)
	wantError(t, resp, out, http.StatusBadRequest, "ERR_SLUICE_340", "edge_id")
}
