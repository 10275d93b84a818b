package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sluicehq/sluice/internal/retry"
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
	case AttackFanOut:
		return r.playFanOut
	case AttackReadFlood:
		return r.playReadFlood
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
		if time.Now().After(deadline) || retry.Sleep(ctx, 100*time.Millisecond) != nil {
			return nil, false
		}
	}
}

// filesHolding counts the files under dir that hold old and those that
// hold current.
func filesHolding(dir, old, current string) (withOld, withCurrent int, err error) {
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // a file that went while walking
		}
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err // a file not read could hold a secret
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
		//lint:ignore ST1005 A is the victim tenant's name, as the report calls it
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
