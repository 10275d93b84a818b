package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sluicehq/sluice/api"
	"github.com/sluicehq/sluice/schemas"
)

// Names of the answers and findings the attacks report, which tests look
// up.
const (
	AnswerMetricsOnAPI      = "GET /metrics on the API listener without a key"
	AnswerMetricsListener   = "GET /metrics on the metrics listener"
	AnswerEvilHost          = "A's management change with Host: evil.example.com"
	AnswerDuplicateNames    = "event with duplicate member names"
	AnswerLoneSurrogate     = `event with "\ud800" in an unknown field`
	AnswerHugeNumber        = "event with 1e999 in an unknown field"
	AnswerForgedKeyDeleted  = "B's api_key_deleted.v0"
	AnswerForgedDestDeleted = "B's event_destination_deleted.v0"
	AnswerReusedID          = "B's event with an id A used"
	AnswerSlowUpload        = "slow upload"
	AnswerBOrdinary         = "B's ordinary POST /events during the attack"
	AnswerBigBody           = "10 MiB body of invalid events"
	AnswerDestination       = "B's destination"
	AnswerSubscription      = "B's subscription"
	AnswerManySources       = "B's subscription with many sources"
	AnswerAPIKey            = "B's API key"
	AnswerReplay            = "B's replay"
	AnswerReplaceFilter     = "subscription with a replace filter"
	AnswerMatchesFilter     = "subscription with a matches filter"
	AnswerHugeServerName    = "event with a 1 MB server_name"
	AnswerLongServerName    = "event with a 50 KB server_name"

	FindingAPIMetricsLeak     = "api_metrics_lists_a_ids"
	FindingMetricsListener    = "metrics_listener_lists_a_ids"
	FindingEvilInResponse     = "evil_host_in_response"
	FindingEvilAuditDelivered = "audit_event_delivered"
	FindingEvilInAudit        = "evil_host_in_delivered_audit_event"
	FindingReplacedSecret     = "files_with_replaced_secret"
	FindingCurrentSecret      = "files_with_current_secret"
	FindingStored             = "stored"
	FindingDuplicates         = "duplicates"
	FindingBPublished         = "b_events_published"
	FindingReplayDeliveries   = "b_records_delivered_after_replays"
)

// evilHost is the Host header of the leak attack.
const evilHost = "evil.example.com"

// play returns the attack named name.
func (r *attackRun) play(name string) func(context.Context) attackOutcome {
	switch name {
	case AttackLeaks:
		return r.playLeaks
	case AttackBadJSON:
		return r.playBadJSON
	case AttackForged:
		return r.playForged
	case AttackDedup:
		return r.playDedup
	case AttackSlowloris:
		return r.playSlowloris
	case AttackBigBodies:
		return r.playBigBodies
	case AttackFloods:
		return r.playFloods
	case AttackFilterBomb:
		return r.playFilterBombs
	}
	return func(context.Context) attackOutcome { return attackOutcome{err: fmt.Errorf("no attack %q", name)} }
}

// tally counts answers by what, status and code.
type tally struct {
	mu      sync.Mutex
	answers []AttackAnswer
}

func (t *tally) add(what string, a answer) { t.addAnswer(a.attackAnswer(what)) }

func (t *tally) addAnswer(in AttackAnswer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, have := range t.answers {
		if have.What == in.What && have.Status == in.Status && have.Code == in.Code {
			t.answers[i].Count += in.Count
			t.answers[i].RetryAfter = have.RetryAfter || in.RetryAfter
			return
		}
	}
	t.answers = append(t.answers, in)
}

// accepted returns how many answers to what were 2xx.
func (t *tally) accepted(what string) (ok, all int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, a := range t.answers {
		if a.What == what {
			all += a.Count
			if a.Accepted() {
				ok += a.Count
			}
		}
	}
	return ok, all
}

// playLeaks looks for A's ids in /metrics without a key, for a
// request-controlled host in what A's change stores, and for A's
// destination's secrets in the data directory.
func (r *attackRun) playLeaks(ctx context.Context) attackOutcome {
	out := attackOutcome{findings: map[string]any{}}
	anon := &apiClient{http: r.b.http, base: r.target.URL, timeout: r.cfg.RequestTimeout}
	m := anon.do(ctx, http.MethodGet, "/metrics", nil, nil)
	out.answers = append(out.answers, m.attackAnswer(AnswerMetricsOnAPI))
	out.findings[FindingAPIMetricsLeak] = m.ok() && r.listsVictim(m.body)
	var parts []string
	parts = append(parts, fmt.Sprintf("/metrics on the API: %s (lists A's ids: %t)", m.text(), out.findings[FindingAPIMetricsLeak]))
	if r.target.MetricsURL != "" {
		ml := (&apiClient{http: r.b.http, base: r.target.MetricsURL, timeout: r.cfg.RequestTimeout}).do(ctx, http.MethodGet, "/metrics", nil, nil)
		out.answers = append(out.answers, ml.attackAnswer(AnswerMetricsListener))
		out.findings[FindingMetricsListener] = ml.ok() && r.listsVictim(ml.body)
	}

	// A management change with a forged Host, and the audit event it
	// makes, which A's subscription delivers.
	stream := "sluice-attack-evil-" + r.runID
	h := r.a.do(ctx, http.MethodPost, "/event_destinations", destinationBody("evil host", stream, "attackEvilSecret"), func(req *http.Request) { req.Host = evilHost })
	out.answers = append(out.answers, h.attackAnswer(AnswerEvilHost))
	out.findings[FindingEvilInResponse] = bytes.Contains(h.body, []byte(evilHost))
	if id := jsonString(h.body, "id"); id != "" {
		audit, found := r.waitAudit(ctx, "event_destination_created.v0", id, 20*time.Second)
		out.findings[FindingEvilAuditDelivered] = found
		out.findings[FindingEvilInAudit] = bytes.Contains(audit, []byte(evilHost))
		parts = append(parts, fmt.Sprintf("evil host in the delivered audit event: %t (delivered: %t)", out.findings[FindingEvilInAudit], found))
		r.a.do(ctx, http.MethodDelete, "/event_destinations/"+id, nil, nil)
	}

	if r.target.DataDir != "" {
		old, current, err := filesHolding(r.target.DataDir, r.secretOld, r.secretNew)
		if err != nil {
			out.err = err
		}
		out.findings[FindingReplacedSecret], out.findings[FindingCurrentSecret] = old, current
		parts = append(parts, fmt.Sprintf("files holding the replaced secret: %d, the current one: %d", old, current))
	}
	out.summary = strings.Join(parts, "; ")
	return out
}

// listsVictim reports whether a metrics page names A's destination or
// subscription.
func (r *attackRun) listsVictim(page []byte) bool {
	return bytes.Contains(page, []byte(r.aDestID)) || bytes.Contains(page, []byte(r.aSubID)) ||
		(r.aAccountID != "" && bytes.Contains(page, []byte(r.aAccountID)))
}

// waitAudit waits for the audit event of kind about resource id to reach
// A's destination, and returns it.
func (r *attackRun) waitAudit(ctx context.Context, kind, id string, timeout time.Duration) ([]byte, bool) {
	deadline := time.Now().Add(timeout)
	for {
		for _, a := range r.victim.audits() {
			if a.kind == kind && bytes.Contains(a.data, []byte(id)) {
				return a.data, true
			}
		}
		if time.Now().After(deadline) || !sleepCtx(ctx, 100*time.Millisecond) {
			return nil, false
		}
	}
}

// filesHolding counts the files under dir that hold old and those that
// hold current.
func filesHolding(dir, old, current string) (withOld, withCurrent int, err error) {
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil // a file that went while walking
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		if bytes.Contains(b, []byte(old)) {
			withOld++
		}
		if bytes.Contains(b, []byte(current)) {
			withCurrent++
		}
		return nil
	})
	if err != nil {
		err = fmt.Errorf("searching %s for the secrets: %w", dir, err)
	}
	return withOld, withCurrent, err
}

// playBadJSON posts events that JSON readers read differently.
func (r *attackRun) playBadJSON(ctx context.Context) attackOutcome {
	var t tally
	for _, c := range []struct{ what, field, raw string }{
		{AnswerDuplicateNames, "server_name", `"server_name":"allowed.example.com","server_name":"internal.example.org"`},
		{AnswerLoneSurrogate, "x_note", `"x_note":"\ud800"`},
		{AnswerHugeNumber, "x_big", `"x_big":1e999`},
	} {
		body, err := r.bEvent("http_request_complete.v0", "", func(obj map[string]any) {
			if c.field == "server_name" {
				conn(obj)["server_name"] = "PLACEHOLDER"
			} else {
				obj[c.field] = "PLACEHOLDER"
			}
		})
		if err != nil {
			return attackOutcome{err: err}
		}
		body = bytes.Replace(body, []byte(`"`+c.field+`":"PLACEHOLDER"`), []byte(c.raw), 1)
		t.add(c.what, r.b.do(ctx, http.MethodPost, "/events", body, nil))
	}
	ok, all := 0, 0
	for _, a := range t.answers {
		if a.Accepted() {
			ok++
		}
		all++
	}
	return attackOutcome{summary: fmt.Sprintf("%d of %d accepted", ok, all), answers: t.answers}
}

// playForged posts audit events of the kinds sluice emits itself.
func (r *attackRun) playForged(ctx context.Context) attackOutcome {
	var t tally
	s := schemas.NewSampler(sampleSeed)
	for _, c := range []struct{ what, kind string }{{AnswerForgedKeyDeleted, "api_key_deleted.v0"}, {AnswerForgedDestDeleted, "event_destination_deleted.v0"}} {
		ev, err := s.Event(c.kind)
		if err != nil {
			return attackOutcome{err: err}
		}
		body := fmt.Appendf(nil, `[{"event_id":%q,"event_type":%q,"event_timestamp":%q,"principal":%s,"object":%s}`,
			schemas.NewID(schemas.PrefixEvent), c.kind, time.Now().UTC().Format(schemas.TimeLayout), ev.Principal, ev.Object)
		body = append(body, ']')
		t.add(c.what, r.b.do(ctx, http.MethodPost, "/events", body, nil))
	}
	ok := 0
	for _, a := range t.answers {
		if a.Accepted() {
			ok++
		}
	}
	return attackOutcome{summary: fmt.Sprintf("%d of %d forged audit events accepted", ok, len(t.answers)), answers: t.answers}
}

// playDedup posts from B an event with the id of one A was just answered
// 202 for.
func (r *attackRun) playDedup(ctx context.Context) attackOutcome {
	id := r.victim.lastAcked()
	if id == "" {
		return attackOutcome{err: fmt.Errorf("A has no event acknowledged yet")}
	}
	body, err := r.bEvent("http_request_complete.v0", id, nil)
	if err != nil {
		return attackOutcome{err: err}
	}
	a := r.b.do(ctx, http.MethodPost, "/events", body, nil)
	var got struct {
		Stored     int `json:"stored"`
		Duplicates int `json:"duplicates"`
	}
	_ = json.Unmarshal(a.body, &got)
	out := attackOutcome{answers: []AttackAnswer{a.attackAnswer(AnswerReusedID)}, findings: map[string]any{FindingStored: got.Stored, FindingDuplicates: got.Duplicates}}
	switch {
	case a.status == http.StatusAccepted && got.Stored == 1:
		out.summary = "B's event stored"
	case a.status == http.StatusAccepted && got.Duplicates == 1:
		out.summary = "B told its event is a duplicate: not stored, and B learns A has that id"
	default:
		out.summary = "B's event answered " + a.text()
	}
	return out
}

// playSlowloris opens cfg.SlowUploads uploads from B that send one byte
// of a chunked body every cfg.SlowEvery, for cfg.SlowFor.
func (r *attackRun) playSlowloris(ctx context.Context) attackOutcome {
	u, err := url.Parse(r.target.URL)
	if err != nil {
		return attackOutcome{err: err}
	}
	var (
		t    tally
		wg   sync.WaitGroup
		mu   sync.Mutex
		open int // still sending at the end, unanswered
		cut  int // closed by sluice without an answer
	)
	end := time.Now().Add(r.cfg.SlowFor)
	for range r.cfg.SlowUploads {
		wg.Go(func() {
			status, retryAfter, how := slowUpload(ctx, u.Host, r.target.TokenB, end, r.cfg.SlowEvery)
			mu.Lock()
			defer mu.Unlock()
			switch how {
			case slowAnswered:
				t.addAnswer(AttackAnswer{What: AnswerSlowUpload, Status: status, Count: 1, RetryAfter: retryAfter})
			case slowOpen:
				open++
			default:
				cut++
			}
		})
	}
	// Once every upload has started, B tries an ordinary request too.
	if sleepCtx(ctx, min(3*time.Second, r.cfg.SlowFor/2)) {
		body, err := r.bEvent("http_request_complete.v0", "", nil)
		if err == nil {
			t.add(AnswerBOrdinary, r.b.do(ctx, http.MethodPost, "/events", body, nil))
		}
	}
	wg.Wait()
	answered := 0
	for _, a := range t.answers {
		if a.What == AnswerSlowUpload {
			answered += a.Count
		}
	}
	return attackOutcome{
		summary:  fmt.Sprintf("%d of %d slow uploads answered early, %d cut without an answer, %d still open at the end", answered, r.cfg.SlowUploads, cut, open),
		answers:  t.answers,
		findings: map[string]any{"slow_uploads_open_at_end": open, "slow_uploads_cut": cut},
	}
}

// How a slow upload ended.
const (
	slowAnswered = iota // sluice answered
	slowOpen            // still open at the end
	slowCut             // sluice closed it without an answer
)

// slowUpload posts a chunked body to host a byte every every until end,
// and returns sluice's answer if one came.
func slowUpload(ctx context.Context, host, token string, end time.Time, every time.Duration) (status int, retryAfter bool, how int) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return 0, false, slowCut
	}
	defer c.Close()
	_ = c.SetDeadline(end.Add(5 * time.Second))
	head := "POST /events HTTP/1.1\r\nHost: " + host + "\r\nService-Version: " + api.SupportedVersion + "\r\nAuthorization: Bearer " + token + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
	if _, err := c.Write([]byte(head)); err != nil {
		return 0, false, slowCut
	}
	type result struct {
		status     int
		retryAfter bool
		err        error
	}
	answered := make(chan result, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			answered <- result{err: err}
			return
		}
		resp.Body.Close()
		answered <- result{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After") != ""}
	}()
	tick := time.NewTicker(every)
	defer tick.Stop()
	chunk := []byte("1\r\n[\r\n")
	for time.Now().Before(end) {
		select {
		case res := <-answered:
			if res.err != nil {
				return 0, false, slowCut
			}
			return res.status, res.retryAfter, slowAnswered
		case <-ctx.Done():
			return 0, false, slowOpen
		case <-tick.C:
			if _, err := c.Write(chunk); err != nil {
				select {
				case res := <-answered:
					if res.err == nil {
						return res.status, res.retryAfter, slowAnswered
					}
				case <-time.After(time.Second):
				}
				return 0, false, slowCut
			}
			chunk = []byte("1\r\n \r\n")
		}
	}
	select {
	case res := <-answered:
		if res.err == nil {
			return res.status, res.retryAfter, slowAnswered
		}
		return 0, false, slowCut
	default:
		return 0, false, slowOpen
	}
}

// playBigBodies posts cfg.BigBodies bodies of cfg.BigBodyBytes of invalid
// events at once from B.
func (r *attackRun) playBigBodies(ctx context.Context) attackOutcome {
	body := invalidEvents(r.cfg.BigBodyBytes)
	client := newAPIClient(r.target.URL, r.target.TokenB, r.cfg.BigBodies, r.cfg.RequestTimeout)
	defer client.close()
	var (
		t  tally
		wg sync.WaitGroup
	)
	for range r.cfg.BigBodies {
		wg.Go(func() { t.add(AnswerBigBody, client.do(ctx, http.MethodPost, "/events", body, nil)) })
	}
	wg.Wait()
	ok, all := t.accepted(AnswerBigBody)
	return attackOutcome{summary: fmt.Sprintf("%d bodies of %.1f MiB sent, %d accepted", all, float64(len(body))/(1<<20), ok), answers: t.answers}
}

// invalidEvents returns a JSON array of about n bytes of events of a kind
// that does not exist.
func invalidEvents(n int) []byte {
	one := `{"event_type":"no_such_kind.v0","object":{"pad":"` + strings.Repeat("x", 1000) + `"}}`
	b := make([]byte, 0, n)
	b = append(b, '[')
	for len(b)+len(one)+2 < n {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, one...)
	}
	return append(b, ']')
}

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
		sleepCtx(ctx, 10*time.Second)
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
	sleepCtx(ctx, 2*time.Second)
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
	sleepCtx(ctx, r.cfg.BombFor)
	var parts []string
	for _, what := range []string{AnswerReplaceFilter, AnswerMatchesFilter, AnswerHugeServerName, AnswerLongServerName} {
		ok, _ := t.accepted(what)
		parts = append(parts, fmt.Sprintf("%s: %s", what, map[bool]string{true: "accepted", false: "refused"}[ok > 0]))
	}
	return attackOutcome{summary: strings.Join(parts, ", "), answers: t.answers}
}

// bEvent returns a request body of one event of kind from B: a sample,
// with id (a new one if empty), stamped now, its object changed by edit.
func (r *attackRun) bEvent(kind, id string, edit func(obj map[string]any)) ([]byte, error) {
	s := schemas.NewSampler(uint64(time.Now().UnixNano()))
	ev, err := s.Event(kind)
	if err != nil {
		return nil, err
	}
	if edit != nil {
		var obj map[string]any
		if err := json.Unmarshal(ev.Object, &obj); err != nil {
			return nil, fmt.Errorf("a sample %s: %w", kind, err)
		}
		edit(obj)
		if ev.Object, err = json.Marshal(obj); err != nil {
			return nil, err
		}
	}
	if id == "" {
		id = schemas.NewID(schemas.PrefixEvent)
	}
	ev.ID, ev.Timestamp = id, time.Now()
	return append(appendRequestEvent([]byte{'['}, &ev), ']'), nil
}

// conn returns the object's conn member, made if missing.
func conn(obj map[string]any) map[string]any {
	c, ok := obj["conn"].(map[string]any)
	if !ok {
		c = map[string]any{}
		obj["conn"] = c
	}
	return c
}
