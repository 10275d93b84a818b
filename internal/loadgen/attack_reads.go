package loadgen

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/sluicehq/sluice/internal/retry"
)

// Names of the read flood's answers and findings.
const (
	AnswerReadFlood  = "B's list reads (GET and HEAD, filtered or not)"
	AnswerVictimRead = "A's management reads"

	FindingReadBaselineAPIKeys      = "a_get_api_keys_baseline"
	FindingReadFloodAPIKeys         = "a_get_api_keys_under_flood"
	FindingReadBaselineDestinations = "a_get_event_destinations_baseline"
	FindingReadFloodDestinations    = "a_get_event_destinations_under_flood"
)

// MaxReadOverBaselineMillis is how much A's management reads (their 95th
// percentile) may take beyond the baseline's while B floods reads (issue
// 23).
const MaxReadOverBaselineMillis = 50

// Sizes of the read flood: what B makes to be listed, and how often A
// reads.
const (
	readFloodDestinations  = 20
	readFloodKeys          = 20
	readFloodSubscriptions = 5
	victimReadEvery        = 50 * time.Millisecond
)

// victimReads are A's reads the read flood measures.
var victimReads = []string{"/api_keys", "/event_destinations"}

// readFloodRequests are B's reads, cycled through: every family B has,
// GET and HEAD, with ?filter= and without.
var readFloodRequests = func() []struct{ method, path string } {
	var out []struct{ method, path string }
	for _, path := range []string{"/event_destinations", "/api_keys", "/event_subscriptions"} {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			for _, query := range []string{"", "?filter=true"} {
				out = append(out, struct{ method, path string }{method, path + query})
			}
		}
	}
	return out
}()

// ReadFigures are the latencies of one of A's reads.
type ReadFigures struct {
	Path string `json:"path"`
	// Requests are the reads sent, OK those answered 200.
	Requests int `json:"requests"`
	OK       int `json:"ok"`
	Latencies
}

// ReadFloodFigures are A's reads without and with the read flood, one
// ReadFigures per read of each, in the same order.
type ReadFloodFigures struct {
	Baseline []ReadFigures `json:"baseline"`
	Flood    []ReadFigures `json:"flood"`
}

// String is the figures in a few words, for the report.
func (f ReadFigures) String() string {
	return fmt.Sprintf("GET %s: %d of %d 200, p50 %.1f ms, p95 %.1f ms, max %.1f ms", f.Path, f.OK, f.Requests, f.P50Millis, f.P95Millis, f.MaxMillis)
}

// playReadFlood has B make some resources, then measures A's management
// reads for cfg.ReadFloodFor with no attack, then again while B sends
// cfg.ReadFloodConcurrency list requests at once, without pause, for as
// long (issue 23's flood was 48).
func (r *attackRun) playReadFlood(ctx context.Context) attackOutcome {
	var t tally
	stream := "sluice-attack-reads-" + r.runID
	var dests, subs, keys []string
	defer func() { r.removeAll(context.WithoutCancel(ctx), subs, dests, keys) }()
	for range readFloodDestinations {
		if id, a := r.b.create(ctx, "/event_destinations", destinationBody("read flood", stream, "attackReadSecret")); id != "" {
			dests = append(dests, id)
		} else {
			t.add("B's destination", a)
		}
	}
	for i := range min(readFloodSubscriptions, len(dests)) {
		if id, a := r.b.create(ctx, "/event_subscriptions", fmt.Appendf(nil, `{"sources":[{"type":"http_request_complete.v0"}],"destination_ids":[%q]}`, dests[i])); id != "" {
			subs = append(subs, id)
		} else {
			t.add("B's subscription", a)
		}
	}
	for range readFloodKeys {
		if id, a := r.b.create(ctx, "/api_keys", []byte(`{"description":"read flood"}`)); id != "" {
			keys = append(keys, id)
		} else {
			t.add("B's API key", a)
		}
	}

	baseline := r.measureReads(ctx, r.cfg.ReadFloodFor, nil)
	flood := r.measureReads(ctx, r.cfg.ReadFloodFor, func(ctx context.Context) { r.floodReads(ctx, &t) })
	out := attackOutcome{answers: t.answers, findings: map[string]any{
		FindingReadBaselineAPIKeys:      baseline[0].String(),
		FindingReadFloodAPIKeys:         flood[0].String(),
		FindingReadBaselineDestinations: baseline[1].String(),
		FindingReadFloodDestinations:    flood[1].String(),
	}}
	for i := range victimReads {
		t.addAnswer(AttackAnswer{What: AnswerVictimRead, Status: http.StatusOK, Count: flood[i].OK})
		if n := flood[i].Requests - flood[i].OK; n > 0 {
			t.addAnswer(AttackAnswer{What: AnswerVictimRead, Status: 0, Count: n, Detail: "not 200 during the flood"})
		}
	}
	out.answers = t.answers
	ok, all := t.accepted(AnswerReadFlood)
	out.summary = fmt.Sprintf("B's reads: %d of %d served; A's GET /api_keys p95 %.1f ms under the flood (baseline %.1f ms), GET /event_destinations p95 %.1f ms (baseline %.1f ms)",
		ok, all, flood[0].P95Millis, baseline[0].P95Millis, flood[1].P95Millis, baseline[1].P95Millis)
	out.reads = &ReadFloodFigures{Baseline: baseline, Flood: flood}
	return out
}

// measureReads has A read each of victimReads every victimReadEvery for
// d, while attack (if any) runs, and returns A's figures of each read.
// attack is stopped when the time is up.
func (r *attackRun) measureReads(ctx context.Context, d time.Duration, attack func(context.Context)) []ReadFigures {
	attackCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	if attack != nil {
		wg.Go(func() { attack(attackCtx) })
		// Let the flood reach its full height before A is measured.
		if retry.Sleep(ctx, time.Second) != nil {
			return nil
		}
	}
	timer, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return r.readUntil(ctx, timer.Done())
}

// readUntil has A read each of victimReads every victimReadEvery until end
// (or ctx) ends, and returns A's figures of each read.
func (r *attackRun) readUntil(ctx context.Context, end <-chan struct{}) []ReadFigures {
	took := make([][]time.Duration, len(victimReads))
	figures := make([]ReadFigures, len(victimReads))
	tick := time.NewTicker(victimReadEvery)
	defer tick.Stop()
	for {
		for i, path := range victimReads {
			a := r.a.do(ctx, http.MethodGet, path, nil, nil)
			figures[i].Requests++
			if a.status == http.StatusOK {
				figures[i].OK++
				took[i] = append(took[i], a.took)
			}
		}
		select {
		case <-ctx.Done():
		case <-end:
		case <-tick.C:
			continue
		}
		break
	}
	for i, path := range victimReads {
		figures[i].Path = path
		figures[i].Latencies = durationLatencies(took[i])
	}
	return figures
}

// floodReads sends cfg.ReadFloodConcurrency of B's reads at once, each
// sender starting the next as soon as one is answered, until ctx ends.
func (r *attackRun) floodReads(ctx context.Context, t *tally) {
	client := newAPIClient(r.target.URL, r.target.TokenB, r.cfg.ReadFloodConcurrency, r.cfg.RequestTimeout)
	defer client.close()
	var wg sync.WaitGroup
	for i := range r.cfg.ReadFloodConcurrency {
		wg.Go(func() {
			for n := i; ctx.Err() == nil; n++ {
				req := readFloodRequests[n%len(readFloodRequests)]
				a := client.do(ctx, req.method, req.path, nil, nil)
				if ctx.Err() != nil && a.status == 0 {
					return // cut by the end of the flood, not answered
				}
				t.add(AnswerReadFlood, a)
			}
		})
	}
	wg.Wait()
}

// durationLatencies returns the percentiles of took, to the
// microsecond.
func durationLatencies(took []time.Duration) Latencies {
	if len(took) == 0 {
		return Latencies{}
	}
	slices.Sort(took)
	at := func(q float64) float64 { return float64(took[int(q*float64(len(took)-1))].Microseconds()) / 1000 }
	return Latencies{P50Millis: at(0.50), P95Millis: at(0.95), P99Millis: at(0.99), MaxMillis: at(1)}
}
