package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/sluicehq/sluice/internal/retry"
	"github.com/sluicehq/sluice/schemas"
)

// playFloods has B make destinations, subscriptions, API keys and
// replays until refused or cfg.FloodCount (cfg.Replays), then removes
// what it made.
func (r *attackRun) playFloods(ctx context.Context) attackOutcome {
	var t tally
	out := attackOutcome{findings: map[string]any{}}
	stream := "sluice-attack-b-" + r.runID
	var dests, subs, keys []string
	defer func() { r.removeAll(context.WithoutCancel(ctx), subs, dests, keys) }()
	made := func(what string, n int, body func(i int) []byte, path string, into *[]string) {
		for i := range n {
			id, a := r.b.create(ctx, path, body(i))
			t.add(what, a)
			if id == "" {
				break
			}
			*into = append(*into, id)
		}
	}
	made(AnswerDestination, r.cfg.FloodCount, func(int) []byte { return destinationBody("flood", stream, "attackFloodSecret") }, "/event_destinations", &dests)
	if len(dests) == 0 {
		//lint:ignore ST1005 B is the attacking tenant's name, as the report calls it
		out.err = fmt.Errorf("B could not make one destination")
		out.answers = t.answers
		return out
	}
	// The replays' subscription selects every event of B's.
	replaySub, a := r.b.create(ctx, "/event_subscriptions", fmt.Appendf(nil, `{"sources":[{"type":"http_request_complete.v0"}],"destination_ids":[%q]}`, dests[0]))
	t.add(AnswerSubscription, a)
	if replaySub != "" {
		subs = append(subs, replaySub)
	}
	made(AnswerSubscription, r.cfg.FloodCount-1, func(i int) []byte {
		return fmt.Appendf(nil, `{"sources":[{"type":"http_request_complete.v0","filter":"ev.conn.server_port == %d"}],"destination_ids":[%q]}`, 10000+i, dests[i%len(dests)])
	}, "/event_subscriptions", &subs)
	// A kind may be a source of a subscription once: the many sources are
	// of every kind of the catalogue, up to the flood count.
	names := schemas.Default().Names()
	sources := make([]string, min(r.cfg.FloodCount, len(names)))
	for i := range sources {
		sources[i] = fmt.Sprintf(`{"type":%q}`, names[i])
	}
	made(AnswerManySources, 1, func(int) []byte {
		return fmt.Appendf(nil, `{"sources":[%s],"destination_ids":[%q]}`, strings.Join(sources, ","), dests[0])
	}, "/event_subscriptions", &subs)
	made(AnswerAPIKey, r.cfg.FloodCount, func(int) []byte { return []byte(`{"description":"flood"}`) }, "/api_keys", &keys)

	if replaySub != "" {
		published := r.publishB(ctx, 500)
		out.findings[FindingBPublished] = published
		since := time.Now().Add(-10 * time.Minute).UTC().Format(time.RFC3339)
		var wg sync.WaitGroup
		for range r.cfg.Replays {
			wg.Go(func() {
				t.add(AnswerReplay, r.b.do(ctx, http.MethodPost, "/event_subscriptions/"+replaySub+"/replay", fmt.Appendf(nil, `{"since":%q}`, since), nil))
			})
		}
		wg.Wait()
		// Let the replays run a while, then count what B's stream got.
		_ = retry.Sleep(ctx, 10*time.Second)
		out.findings[FindingReplayDeliveries] = r.emulatorRecords(ctx, stream)
	}
	out.answers = t.answers
	var parts []string
	for _, what := range []string{AnswerDestination, AnswerSubscription, AnswerManySources, AnswerAPIKey, AnswerReplay} {
		ok, all := t.accepted(what)
		parts = append(parts, fmt.Sprintf("%s: %d of %d made", strings.TrimPrefix(what, "B's "), ok, all))
	}
	out.summary = strings.Join(parts, ", ")
	return out
}

// publishB publishes n events from B in batches of 100 and returns how
// many were stored.
func (r *attackRun) publishB(ctx context.Context, n int) int {
	s := schemas.NewSampler(sampleSeed + 1)
	stored := 0
	for start := 0; start < n; start += 100 {
		b := []byte{'['}
		for i := start; i < min(start+100, n); i++ {
			ev := s.HTTPRequest1KB()
			ev.ID = schemas.NewID(schemas.PrefixEvent)
			ev.Timestamp = time.Now()
			if i > start {
				b = append(b, ',')
			}
			b = appendRequestEvent(b, &ev)
		}
		a := r.b.do(ctx, http.MethodPost, "/events", append(b, ']'), nil)
		var got struct {
			Stored int `json:"stored"`
		}
		if json.Unmarshal(a.body, &got) == nil {
			stored += got.Stored
		}
	}
	return stored
}

// emulatorRecords returns how many records the emulator's Kinesis stream
// has accepted, or -1 when it cannot say.
func (r *attackRun) emulatorRecords(ctx context.Context, stream string) int64 {
	c := &apiClient{http: r.b.http, base: r.target.EmulatorURL, timeout: r.cfg.RequestTimeout}
	a := c.do(ctx, http.MethodGet, "/_emulator/counters?service=kinesis&resource="+url.QueryEscape(stream), nil, nil)
	var counters struct {
		RecordsAccepted int64 `json:"records_accepted"`
	}
	if !a.ok() || json.Unmarshal(a.body, &counters) != nil {
		return -1
	}
	return counters.RecordsAccepted
}

// removeAll deletes B's subscriptions, destinations and API keys, a few at
// a time.
func (r *attackRun) removeAll(ctx context.Context, subs, dests, keys []string) {
	var paths []string
	for _, id := range subs {
		paths = append(paths, "/event_subscriptions/"+id)
	}
	for _, id := range dests {
		paths = append(paths, "/event_destinations/"+id)
	}
	for _, id := range keys {
		paths = append(paths, "/api_keys/"+id)
	}
	var wg sync.WaitGroup
	work := make(chan string)
	for range 8 {
		wg.Go(func() {
			for p := range work {
				r.b.do(ctx, http.MethodDelete, p, nil, nil)
			}
		})
	}
	for _, p := range paths {
		work <- p
	}
	close(work)
	wg.Wait()
}

// bombReplaceSubscriptions is how many subscriptions of the replace filter
// B makes: three, with one event, OOM-kill a 512 MiB container on main.
const bombReplaceSubscriptions = 3

// playFilterBombs has B make the two filters of issue 11 that cost more
// than their estimate, and publish the events that set them off: a 1 MB
// server_name for bombReplaceSubscriptions subscriptions of the replace
// filter (HTTP requests), a 50 KB one for the matches filter (TCP
// connections, so that the matches filter never sees the 1 MB one).
func (r *attackRun) playFilterBombs(ctx context.Context) attackOutcome {
	var t tally
	stream := "sluice-attack-bomb-" + r.runID
	dest, a := r.b.create(ctx, "/event_destinations", destinationBody("bomb", stream, "attackBombSecret"))
	if dest == "" {
		//lint:ignore ST1005 B is the attacking tenant's name, as the report calls it
		return attackOutcome{err: fmt.Errorf("B could not make a destination: %s", a.text())}
	}
	var subs []string
	defer func() { r.removeAll(context.WithoutCancel(ctx), subs, []string{dest}, nil) }()
	replace := "ev.conn.server_name.replace('', '" + strings.Repeat("a", 390) + "') == 'x'"
	bombs := []struct{ what, kind, filter string }{
		{AnswerMatchesFilter, "tcp_connection_closed.v0", "ev.conn.server_name.matches(ev.conn.server_name)"},
	}
	for range bombReplaceSubscriptions {
		bombs = append(bombs, struct{ what, kind, filter string }{AnswerReplaceFilter, "http_request_complete.v0", replace})
	}
	for _, c := range bombs {
		body, _ := json.Marshal(map[string]any{"sources": []map[string]string{{"type": c.kind, "filter": c.filter}}, "destination_ids": []string{dest}})
		id, a := r.b.create(ctx, "/event_subscriptions", body)
		t.add(c.what, a)
		if id != "" {
			subs = append(subs, id)
		}
	}
	// Let the routes start before the events come.
	_ = retry.Sleep(ctx, 2*time.Second)
	for _, c := range []struct {
		what, kind string
		size       int
	}{
		{AnswerHugeServerName, "http_request_complete.v0", 1_000_000},
		{AnswerLongServerName, "tcp_connection_closed.v0", 50_000},
	} {
		body, err := r.bEvent(c.kind, "", func(obj map[string]any) { conn(obj)["server_name"] = strings.Repeat("a", c.size) })
		if err != nil {
			return attackOutcome{err: err, answers: t.answers}
		}
		t.add(c.what, r.b.do(ctx, http.MethodPost, "/events", body, nil))
	}
	_ = retry.Sleep(ctx, r.cfg.BombFor)
	var parts []string
	for _, what := range []string{AnswerReplaceFilter, AnswerMatchesFilter, AnswerHugeServerName, AnswerLongServerName} {
		ok, _ := t.accepted(what)
		parts = append(parts, fmt.Sprintf("%s: %s", what, map[bool]string{true: "accepted", false: "refused"}[ok > 0]))
	}
	return attackOutcome{summary: strings.Join(parts, ", "), answers: t.answers}
}
