package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/sluicehq/sluice/internal/retry"
)

// Names of the answers and findings of the fan-out attack.
const (
	AnswerFanOutDestination  = "B's fan-out destination"
	AnswerFanOutSubscription = "B's subscription naming every destination"

	FindingFanOutRoutes      = "fan_out_routes"
	FindingFanOutPublished   = "fan_out_events_published"
	FindingFanOutDelivered   = "fan_out_records_delivered"
	FindingFanOutStopSeconds = "fan_out_seconds_to_stop_after_delete"
)

// Sizes of the fan-out attack, those of issue 23.
const (
	fanOutDestinations  = 50
	fanOutSubscriptions = 10
	// fanOutQuiet is how long B's stream must get nothing for its
	// deliveries to count as stopped.
	fanOutQuiet = 2 * time.Second
)

// fanOutFilter is a filter of 16 matches that keeps every sampled event.
func fanOutFilter() string {
	terms := make([]string, 16)
	for i := range terms {
		terms[i] = fmt.Sprintf(`ev.conn.server_name.matches("^x%d[.][a-z]+[0-9]+[.]example$")`, i)
	}
	return "!(" + strings.Join(terms, " || ") + ")"
}

// playFanOut has B make as many destinations (up to 50) and subscriptions
// (up to 10, each naming every destination, with a filter of 16 matches)
// as the limits allow, publish cfg.FanOutEvents events through them,
// delete the subscriptions, and measure how long its stream goes on
// getting records after.
func (r *attackRun) playFanOut(ctx context.Context) attackOutcome {
	var t tally
	out := attackOutcome{findings: map[string]any{}}
	stream := "sluice-attack-fanout-" + r.runID
	var dests, subs []string
	defer func() { r.removeAll(context.WithoutCancel(ctx), subs, dests, nil) }()
	for range fanOutDestinations {
		id, a := r.b.create(ctx, "/event_destinations", destinationBody("fan-out", stream, "attackFanOutSecret"))
		t.add(AnswerFanOutDestination, a)
		if id == "" {
			break
		}
		dests = append(dests, id)
	}
	if len(dests) == 0 {
		//lint:ignore ST1005 B is the attacking tenant's name, as the report calls it
		return attackOutcome{err: fmt.Errorf("B could not make one destination"), answers: t.answers}
	}
	body, _ := json.Marshal(map[string]any{
		"sources":         []map[string]string{{"type": "http_request_complete.v0", "filter": fanOutFilter()}},
		"destination_ids": dests,
	})
	for range fanOutSubscriptions {
		// Paced by the account's write rate: a 429 is waited out, so that
		// what refuses B in the end is the limit of what it may have.
		id, a := r.b.create(ctx, "/event_subscriptions", body)
		for tries := 0; a.status == http.StatusTooManyRequests && tries < 10; tries++ {
			if retry.Sleep(ctx, time.Second) != nil {
				break
			}
			id, a = r.b.create(ctx, "/event_subscriptions", body)
		}
		t.add(AnswerFanOutSubscription, a)
		if id != "" {
			subs = append(subs, id)
		}
	}
	out.findings[FindingFanOutRoutes] = len(subs) * len(dests)
	// Let the routes start before the events come.
	_ = retry.Sleep(ctx, 2*time.Second)
	out.findings[FindingFanOutPublished] = r.publishB(ctx, r.cfg.FanOutEvents)

	// Delete the subscriptions, then watch B's stream until it gets
	// nothing for fanOutQuiet.
	var wg sync.WaitGroup
	for _, id := range subs {
		wg.Go(func() { r.b.do(ctx, http.MethodDelete, "/event_subscriptions/"+id, nil, nil) })
	}
	wg.Wait()
	subs = nil
	deleted := time.Now()
	last, lastChange := r.emulatorRecords(ctx, stream), deleted
	for time.Since(lastChange) < fanOutQuiet && time.Since(deleted) < r.cfg.DrainTimeout {
		if retry.Sleep(ctx, 100*time.Millisecond) != nil {
			break
		}
		if n := r.emulatorRecords(ctx, stream); n != last {
			last, lastChange = n, time.Now()
		}
	}
	out.findings[FindingFanOutDelivered] = last
	out.findings[FindingFanOutStopSeconds] = lastChange.Sub(deleted).Seconds()
	out.answers = t.answers
	dOK, _ := t.accepted(AnswerFanOutDestination)
	sOK, sAll := t.accepted(AnswerFanOutSubscription)
	out.summary = fmt.Sprintf("%d destinations, %d of %d subscriptions made (%d routes); %v events published; %d records delivered; deliveries stopped %.1f s after the deletes",
		dOK, sOK, sAll, sOK*dOK, out.findings[FindingFanOutPublished], last, lastChange.Sub(deleted).Seconds())
	return out
}

// maxFanOutStop is the most seconds B's deliveries may go on after its
// subscriptions are deleted: the two seconds of docs/delivery.md, and the
// 100 ms the attack polls its stream at.
const maxFanOutStop = 2.1

// checkFanOut checks that every write of B's the limits refused was a
// 4xx, and that its deliveries stopped within two seconds of the deletes.
func checkFanOut(p AttackPhase, add func(string, string, ...any)) {
	for _, a := range p.Answers {
		if !a.Accepted() && (a.Status < 400 || a.Status >= 500) {
			add(p.Name, "%s refused with %s, want a 4xx", a.What, statusText(a.Status, a.Code))
		}
	}
	if s, ok := p.Findings[FindingFanOutStopSeconds].(float64); ok && s > maxFanOutStop {
		add(p.Name, "B's deliveries went on %.1f s after its subscriptions were deleted, over %.1f s", s, maxFanOutStop)
	}
}
