package pipeline_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/destinations"
	"github.com/sluicehq/sluice/internal/kinesalitetest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/schemas"
)

// TestDeliverToKinesis routes kinesisEvents (50,000; 10,000 under the
// race detector) mixed events through three
// subscriptions with different sources, filters and field selections to
// two Kinesis streams of kinesalite, reads every shard back, and checks
// that each stream holds exactly the events its subscriptions select, each
// once, with exactly the selected fields.
func TestDeliverToKinesis(t *testing.T) {
	if testing.Short() {
		t.Skip("delivers many events through kinesalite")
	}
	kl := kinesalitetest.Start(t)
	for _, kv := range kl.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	e := startDeliveryTo(t, pipeline.DeliveryConfig{}, destinations.New)
	a, b := kinesisDestination(t, e, kl, "sluice-a"), kinesisDestination(t, e, kl, "sluice-b")
	// Every HTTPS request, three fields, to a.
	e.subscribe(t, []string{a.ID}, store.Source{Type: httpKind, Filter: "ev.conn.server_port == 443", Fields: []string{"conn.client_ip", "conn.server_port", "http.request.method"}})
	// Every TCP connection to port 22, whole, and tunnel credential audit events, to a and b.
	e.subscribe(t, []string{a.ID, b.ID}, store.Source{Type: tcpKind, Filter: "ev.conn.server_port == 22"}, store.Source{Type: "certificate_authority_created.v0"})
	// Every HTTP request from 203.0.113.0/24, the conn group only, to b.
	e.subscribe(t, []string{b.ID}, store.Source{Type: httpKind, Filter: "inCIDR(ev.conn.client_ip, '203.0.113.0/24')", Fields: []string{"conn"}})

	// Events: HTTP on 443 or 80 from two networks, TCP on 22 or 5432,
	// tunnel credentials created, and a kind nobody subscribed to.
	const n = kinesisEvents
	type expected struct {
		fields []string // nil: the whole object
	}
	want := map[string]map[string]expected{a.ID: {}, b.ID: {}} // destination → event id → what
	sampler := schemas.NewSampler(7)
	kinds := []string{httpKind, httpKind, tcpKind, "certificate_authority_created.v0", "ip_policy_created.v0"}
	events := make([]schemas.Event, 0, 1000)
	flush := func() {
		for _, res := range e.prod.Publish(e.ctx, events...) {
			if res.Err != nil {
				t.Fatalf("publishing: %v", res.Err)
			}
		}
		events = events[:0]
	}
	for i := range n {
		kind := kinds[i%len(kinds)]
		ev, err := sampler.Event(kind)
		if err != nil {
			t.Fatal(err)
		}
		ev.AccountID = e.account
		var object map[string]any
		if err := json.Unmarshal(ev.Object, &object); err != nil {
			t.Fatal(err)
		}
		conn, _ := object["conn"].(map[string]any)
		switch kind {
		case httpKind:
			https := i%3 != 0
			conn["server_port"] = map[bool]int{true: 443, false: 80}[https]
			ours := i%4 == 0
			conn["client_ip"] = map[bool]string{true: fmt.Sprintf("203.0.113.%d", i%250), false: "198.51.100.9"}[ours]
			if https {
				want[a.ID][ev.ID] = expected{fields: []string{"conn.client_ip", "conn.server_port", "http.request.method"}}
			}
			if ours {
				want[b.ID][ev.ID] = expected{fields: []string{"conn"}}
			}
		case tcpKind:
			ssh := i%2 == 0
			conn["server_port"] = map[bool]int{true: 22, false: 5432}[ssh]
			if ssh {
				want[a.ID][ev.ID] = expected{}
				want[b.ID][ev.ID] = expected{}
			}
		case "certificate_authority_created.v0":
			want[a.ID][ev.ID] = expected{}
			want[b.ID][ev.ID] = expected{}
		}
		if ev.Object, err = json.Marshal(object); err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
		if len(events) == cap(events) {
			flush()
		}
	}
	flush()

	for _, d := range []store.Destination{a, b} {
		wantIDs := want[d.ID]
		var got []kinesalitetest.Record
		deadline := time.Now().Add(2 * time.Minute)
		for {
			got = kl.ReadAll(t, d.Target.Kinesis.StreamARN)
			if len(got) >= len(wantIDs) || time.Now().After(deadline) {
				break
			}
			time.Sleep(250 * time.Millisecond) // polling kinesalite while delivery runs, with a deadline
		}
		seen := make(map[string]int, len(got))
		for _, r := range got {
			seen[r.PartitionKey]++
			w, ok := wantIDs[r.PartitionKey]
			if !ok {
				t.Fatalf("%s holds event %s, which none of its subscriptions selects: %s", d.ID, r.PartitionKey, r.Data)
			}
			checkDelivered(t, r, w.fields)
		}
		duplicates := 0
		for _, c := range seen {
			duplicates += c - 1
		}
		missing := 0
		for id := range wantIDs {
			if seen[id] == 0 {
				missing++
			}
		}
		t.Logf("%s: %d events selected, %d records, %d missing, %d duplicates", d.ID, len(wantIDs), len(got), missing, duplicates)
		if missing > 0 || duplicates > 0 {
			t.Errorf("%s: %d missing, %d duplicates", d.ID, missing, duplicates)
		}
	}
	waitAllAcked(t, e)
}

// checkDelivered checks that a record is the envelope of its event with
// exactly the selected fields of the object (every field for nil).
func checkDelivered(t *testing.T, r kinesalitetest.Record, fields []string) {
	t.Helper()
	var ev struct {
		ID        string         `json:"event_id"`
		Type      string         `json:"event_type"`
		Timestamp string         `json:"event_timestamp"`
		AccountID string         `json:"account_id"`
		Principal any            `json:"principal"`
		Object    map[string]any `json:"object"`
	}
	if err := json.Unmarshal(r.Data, &ev); err != nil {
		t.Fatalf("record %s is not an envelope: %v", r.Data, err)
	}
	if ev.ID != r.PartitionKey || ev.Type == "" || ev.Timestamp == "" || ev.AccountID == "" {
		t.Fatalf("record %s: envelope fields missing or partition key %s", r.Data, r.PartitionKey)
	}
	if fields == nil {
		return
	}
	var paths []string
	var walk func(prefix string, v map[string]any)
	walk = func(prefix string, v map[string]any) {
		for k, child := range v {
			if m, ok := child.(map[string]any); ok && !slices.Contains(fields, prefix+k) {
				walk(prefix+k+".", m)
				continue
			}
			paths = append(paths, prefix+k)
		}
	}
	walk("", ev.Object)
	slices.Sort(paths)
	for _, p := range paths {
		if !slices.ContainsFunc(fields, func(f string) bool { return p == f || strings.HasPrefix(p, f+".") }) {
			t.Fatalf("record %s has %s, which is not selected (%v)", ev.ID, p, fields)
		}
	}
	if len(paths) == 0 {
		t.Fatalf("record %s has no selected field: %v", ev.ID, slices.Collect(maps.Keys(ev.Object)))
	}
}
