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

	FindingFanOutRoutes       = "fan_out_routes"
	FindingFanOutPublished    = "fan_out_events_published"
	FindingFanOutDelivered    = "fan_out_records_delivered"
	FindingFanOutStopSeconds  = "fan_out_seconds_to_stop_after_delete"
	FindingFanOutAtDelete     = "fan_out_records_delivered_at_delete"
	FindingFanOutReadsAPIKeys = "a_get_api_keys_during_fan_out"
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
// delete the subscriptions while they are delivered, and measure how long
// its stream goes on getting records after, and A's management reads
// before and during.
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
	// Let the routes start before the events come, then measure A's
	// management reads with B's routes idle.
	_ = retry.Sleep(ctx, 2*time.Second)
	baseline := r.measureReads(ctx, fanOutReadsFor, nil)

	// A's reads go on while B publishes, its routes deliver, and it
	// deletes its subscriptions under that load.
	var (
		published int
		delivered fanOutDelivery
	)
	attackDone := make(chan struct{})
	var attack sync.WaitGroup
	attack.Go(func() {
		defer close(attackDone)
		delivered = r.fanOutAndDelete(ctx, stream, subs, len(dests), &published)
	})
	during := r.readUntil(ctx, attackDone)
	attack.Wait()
	subs = nil

	out.findings[FindingFanOutPublished] = published
	out.findings[FindingFanOutAtDelete] = delivered.atDelete
	out.findings[FindingFanOutDelivered] = delivered.last
	out.findings[FindingFanOutStopSeconds] = delivered.stop.Seconds()
	out.findings[FindingReadBaselineAPIKeys] = baseline[0].String()
	out.findings[FindingFanOutReadsAPIKeys] = during[0].String()
	out.reads = &ReadFloodFigures{Baseline: baseline, Flood: during}
	for i := range victimReads {
		t.addAnswer(AttackAnswer{What: AnswerVictimRead, Status: http.StatusOK, Count: during[i].OK})
		if n := during[i].Requests - during[i].OK; n > 0 {
			t.addAnswer(AttackAnswer{What: AnswerVictimRead, Status: 0, Count: n, Detail: "not 200 during the fan-out"})
		}
	}
	out.answers = t.answers
	dOK, _ := t.accepted(AnswerFanOutDestination)
	sOK, sAll := t.accepted(AnswerFanOutSubscription)
	out.summary = fmt.Sprintf("%d destinations, %d of %d subscriptions made (%d routes); %d events published; %d records delivered, %d of them when the subscriptions were deleted; deliveries stopped %.1f s after the deletes; A's GET /api_keys p95 %.1f ms (baseline %.1f ms), GET /event_destinations p95 %.1f ms (baseline %.1f ms)",
		dOK, sOK, sAll, sOK*dOK, published, delivered.last, delivered.atDelete, delivered.stop.Seconds(),
		during[0].P95Millis, baseline[0].P95Millis, during[1].P95Millis, baseline[1].P95Millis)
	return out
}

// fanOutReadsFor is how long A's reads are measured with B's routes idle.
const fanOutReadsFor = 5 * time.Second

// fanOutDelivery is what B's stream got: records when B deleted its
// subscriptions (atDelete) and in the end (last), and how long after the
// deletes the last came (stop).
type fanOutDelivery struct {
	atDelete, last int64
	stop           time.Duration
}

// fanOutAndDelete publishes cfg.FanOutEvents events of B's, and deletes
// B's subscriptions once its stream has got a quarter of the records the
// routes make of them (or the events are all published), while the rest
// are still being delivered; then it watches B's stream until it gets
// nothing for fanOutQuiet. published is set once publishing ends.
func (r *attackRun) fanOutAndDelete(ctx context.Context, stream string, subs []string, dests int, published *int) fanOutDelivery {
	var publishing sync.WaitGroup
	publishDone := make(chan struct{})
	publishing.Go(func() {
		defer close(publishDone)
		*published = r.publishB(ctx, r.cfg.FanOutEvents)
	})
	defer publishing.Wait()
	want := int64(r.cfg.FanOutEvents) * int64(len(subs)*dests) / 4
	for r.emulatorRecords(ctx, stream) < want {
		select {
		case <-ctx.Done():
			return fanOutDelivery{}
		case <-publishDone:
		case <-time.After(100 * time.Millisecond):
			continue
		}
		break
	}
	var wg sync.WaitGroup
	for _, id := range subs {
		wg.Go(func() { r.b.do(ctx, http.MethodDelete, "/event_subscriptions/"+id, nil, nil) })
	}
	wg.Wait()
	deleted := time.Now()
	d := fanOutDelivery{atDelete: r.emulatorRecords(ctx, stream)}
	d.last = d.atDelete
	lastChange := deleted
	for time.Since(lastChange) < fanOutQuiet && time.Since(deleted) < r.cfg.DrainTimeout {
		if retry.Sleep(ctx, 100*time.Millisecond) != nil {
			break
		}
		if n := r.emulatorRecords(ctx, stream); n != d.last {
			d.last, lastChange = n, time.Now()
		}
	}
	d.stop = lastChange.Sub(deleted)
	return d
}

// maxFanOutStop is the most seconds B's deliveries may go on after its
// subscriptions are deleted: the two seconds of docs/delivery.md, and the
// 100 ms the attack polls its stream at.
const maxFanOutStop = 2.1

// checkFanOut checks that every write of B's the limits refused was a
// 4xx, that A's management reads kept within their baseline, and that B's
// deliveries stopped within two seconds of the deletes.
func checkFanOut(p AttackPhase, add func(string, string, ...any)) {
	for _, a := range p.Answers {
		if !a.Accepted() && (a.Status < 400 || a.Status >= 500) {
			add(p.Name, "%s refused with %s, want a 4xx", a.What, statusText(a.Status, a.Code))
		}
	}
	checkVictimReads(p, add)
	if s, ok := p.Findings[FindingFanOutStopSeconds].(float64); ok && s > maxFanOutStop {
		add(p.Name, "B's deliveries went on %.1f s after its subscriptions were deleted, over %.1f s", s, maxFanOutStop)
	}
}
