package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/check"
)

// auditDelivered subscribes a new Kinesis destination of the serve --dev
// p to the three audit kinds (created, updated, deleted), then calls life
// — one resource's create, update and delete, returning its id — until
// the three events of one life are read back from the destination with
// sluice tail. A life runs at most once a second, and again only while
// none has been delivered whole: the route starts within a second or two
// of the subscription, and events of a life before it are not routed. It
// returns the delivered events of that resource by kind, each the line
// tail printed, and the id.
func auditDelivered(t *testing.T, bin string, p *serveProcess, token string, kinds [3]string, life func(i int) string) (map[string]string, string) {
	t.Helper()
	status, body := request(t, http.MethodPost, p.url+"/event_destinations", token,
		`{"target": {"kinesis": {"stream_arn": "arn:aws:kinesis:eu-west-1:123456789012:stream/audit", "auth": {"role": {"role_arn": "arn:aws:iam::123456789012:role/sluice"}}}}}`)
	if status != http.StatusCreated {
		t.Fatalf("creating a destination: %d %s", status, body)
	}
	var dest struct{ ID string }
	if err := json.Unmarshal([]byte(body), &dest); err != nil {
		t.Fatal(err)
	}
	status, body = request(t, http.MethodPost, p.url+"/event_subscriptions", token,
		`{"sources": [{"type": "`+kinds[0]+`"}, {"type": "`+kinds[1]+`"}, {"type": "`+kinds[2]+`"}], "destination_ids": ["`+dest.ID+`"]}`)
	if status != http.StatusCreated {
		t.Fatalf("creating the subscription: %d %s", status, body)
	}

	type seen struct {
		events map[string]map[string]string // by resource id, then kind
		tail   string
	}
	var lives []string
	var last time.Time
	got := check.Eventually(t, 60*time.Second, "the three audit events of one resource delivered", func() (seen, bool) {
		if time.Since(last) >= time.Second {
			lives = append(lives, life(len(lives)))
			last = time.Now()
		}
		out, err := tailWithoutAWS(t, bin, p.url, token, dest.ID, "--since", "5m", "--follow=false", "--json")
		if err != nil && !strings.Contains(err.Error(), "not found") && !strings.Contains(err.Error(), "ResourceNotFoundException") {
			t.Fatalf("sluice tail: %v", err)
		}
		s := seen{events: map[string]map[string]string{}, tail: out + p.tail()}
		for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
			var ev struct {
				Type   string `json:"event_type"`
				Object struct{ ID string }
			}
			if json.Unmarshal([]byte(line), &ev) != nil || ev.Object.ID == "" {
				continue
			}
			if s.events[ev.Object.ID] == nil {
				s.events[ev.Object.ID] = map[string]string{}
			}
			s.events[ev.Object.ID][ev.Type] = line
		}
		for _, id := range lives {
			if e := s.events[id]; e[kinds[0]] != "" && e[kinds[1]] != "" && e[kinds[2]] != "" {
				return s, true
			}
		}
		return s, false
	})
	for _, id := range lives {
		if e := got.events[id]; len(e) == 3 {
			return e, id
		}
	}
	panic("unreachable: Eventually returned without one life delivered")
}
