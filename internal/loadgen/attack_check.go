package loadgen

import (
	"errors"
	"fmt"
	"strings"
)

// Bounds of AttackReport.Violations, from issue 11.
const (
	// MaxVictimIngestMillis is the most A's POST /events may take (its
	// 99th percentile) while B attacks.
	MaxVictimIngestMillis = 1000
	// MaxDeliveryOverBaselineMillis is how much A's delivery latency (its
	// 99th percentile) may exceed the baseline's during an attack.
	MaxDeliveryOverBaselineMillis = 1000
	// MaxRSSOverLimit is how far above the memory limit the peak resident
	// memory may go, as a share of the limit.
	MaxRSSOverLimit = 0.25
)

// ErrAttackGuarantee is wrapped by the error of CheckGuarantees.
var ErrAttackGuarantee = errors.New("a guarantee of tenancy broke")

// Violations returns, by phase ("baseline", an attack's name, or "run"
// for the whole run), what broke of what sluice guarantees an account
// under another's attack: the process stays up; A's ingest is answered
// 202 within a second; A's delivery stays within its baseline plus a
// second; nothing A was answered 202 for is lost; the peak resident
// memory stays within the memory limit plus a quarter; and each attack's
// own outcome, as issue 11 says it must be. Each message gives the
// figures. A phase with nothing broken has no entry.
func (r AttackReport) Violations() map[string][]string {
	out := map[string][]string{}
	add := func(phase, format string, args ...any) { out[phase] = append(out[phase], fmt.Sprintf(format, args...)) }
	if r.CutShort != "" {
		add("run", "the run was cut short (%s): the attacks and the wait for A's deliveries were not played to their end", r.CutShort)
	}
	if !r.Up {
		add("run", "the process was down at the end")
	}
	if r.Missing > 0 {
		add("run", "%d of the %d events A was answered 202 for were never delivered", r.Missing, r.Acked)
	}
	r.checkVictim(r.Baseline, add)
	for _, p := range r.Attacks {
		if p.Error != "" {
			add(p.Name, "the attack could not be played to its end: %s", p.Error)
		}
		r.checkVictim(p, add)
		baseline := p.BaselineDelivery
		if baseline == (Latencies{}) {
			baseline = r.Baseline.A.Delivery
		}
		if p.A.Delivery.P99Millis > baseline.P99Millis+MaxDeliveryOverBaselineMillis {
			add(p.Name, "A's delivery latency p99 %.0f ms is over the baseline's %.0f ms plus %d ms", p.A.Delivery.P99Millis, baseline.P99Millis, MaxDeliveryOverBaselineMillis)
		}
		switch p.Name {
		case AttackLeaks:
			checkLeaks(p, r.Target, add)
		case AttackBadJSON:
			refused(p, add, AnswerDuplicateNames, AnswerLoneSurrogate, AnswerHugeNumber)
		case AttackForged:
			refused(p, add, AnswerForgedKeyDeleted, AnswerForgedDestDeleted)
		case AttackDedup:
			a, _ := p.Answer(AnswerReusedID)
			if a.Status != 202 || findingInt(p.Findings[FindingStored]) != 1 {
				add(p.Name, "B's event with an id A used must be stored (202, stored 1): got %s, stored %v, duplicates %v", statusText(a.Status, a.Code), p.Findings[FindingStored], p.Findings[FindingDuplicates])
			}
		case AttackSlowloris:
			checkShare(p, add, true)
		case AttackBigBodies:
			checkShare(p, add, false)
			for _, a := range p.Answers {
				if a.Accepted() {
					add(p.Name, "%d bodies of invalid events were accepted: %d", a.Count, a.Status)
				}
			}
		case AttackFloods:
			checkFloods(p, r.Config.Replays, add)
		case AttackFilterBomb:
			refused(p, add, AnswerMatchesFilter, AnswerHugeServerName, AnswerLongServerName)
		case AttackFanOut:
			checkFanOut(p, add)
		case AttackReadFlood:
			checkReadFlood(p, add)
		}
	}
	return out
}

// checkVictim checks what holds in every phase: the process up, A's
// ingest all 202 within MaxVictimIngestMillis, the peak memory.
func (r AttackReport) checkVictim(p AttackPhase, add func(string, string, ...any)) {
	if p.Outcome == "not played: the process is down" {
		add(p.Name, "not played: the process was down")
		return
	}
	if !p.Up {
		add(p.Name, "the process was down at the end of the phase")
	}
	if !p.A.AllAccepted() {
		add(p.Name, "A's POST /events must all get 202: got %s of %d requests", codesText(p.A.Codes, p.A.NotSent), p.A.Requests)
	}
	if p.A.Ingest.P99Millis > MaxVictimIngestMillis {
		add(p.Name, "A's POST /events took %.0f ms (p99; max %.0f ms), over %d ms", p.A.Ingest.P99Millis, p.A.Ingest.MaxMillis, MaxVictimIngestMillis)
	}
	if limit := r.Target.MemoryLimit; limit > 0 && p.PeakRSSBytes > uint64(float64(limit)*(1+MaxRSSOverLimit)) {
		add(p.Name, "peak resident memory %d MiB is over the memory limit %d MiB plus a quarter (%d MiB)", p.PeakRSSBytes>>20, limit>>20, int64(float64(limit)*(1+MaxRSSOverLimit))>>20)
	}
}

// refused checks that each request named was refused with a 4xx.
func refused(p AttackPhase, add func(string, string, ...any), whats ...string) {
	for _, what := range whats {
		a, ok := p.Answer(what)
		switch {
		case !ok:
			add(p.Name, "%s: not sent", what)
		case a.Status < 400 || a.Status >= 500:
			add(p.Name, "%s must be refused with a 4xx: got %s", what, statusText(a.Status, a.Code))
		}
	}
}

// checkLeaks checks that /metrics is not on the API listener, that no
// request-controlled host is delivered, and that no replaced secret is
// left in the data directory.
func checkLeaks(p AttackPhase, t AttackTarget, add func(string, string, ...any)) {
	if a, ok := p.Answer(AnswerMetricsOnAPI); ok && a.Accepted() {
		add(p.Name, "/metrics is served on the API listener without a key (%d; lists A's ids: %v)", a.Status, p.Findings[FindingAPIMetricsLeak])
	}
	if t.MetricsURL == "" {
		add(p.Name, "the process has no metrics listener apart from the API (--metrics-http)")
	} else if a, ok := p.Answer(AnswerMetricsListener); !ok || a.Status != 200 {
		add(p.Name, "/metrics on the metrics listener: got %s, want 200", statusText(a.Status, a.Code))
	}
	if p.Findings[FindingEvilAuditDelivered] != true {
		add(p.Name, "the audit event of A's change with Host: %s was not delivered within 20 s: cannot tell what it carries", evilHost)
	} else if p.Findings[FindingEvilInAudit] == true {
		add(p.Name, "the delivered audit event of A's change carries the request's Host %s", evilHost)
	}
	if n := findingInt(p.Findings[FindingReplacedSecret]); n > 0 {
		add(p.Name, "the replaced AWS secret of A's destination is in clear in %d files of the data directory", n)
	}
}

// checkShare checks B's answers when B goes over its share of the front
// door: 429 with Retry-After, never 503 (which says sluice is unwell).
// With need429, at least one 429 is required.
func checkShare(p AttackPhase, add func(string, string, ...any), need429 bool) {
	got429 := false
	var bad []string
	for _, a := range p.Answers {
		switch {
		case a.Status == 429 && a.RetryAfter:
			got429 = true
		case a.Status == 429:
			bad = append(bad, fmt.Sprintf("%s: 429 without Retry-After", a.What))
		case a.Status == 503:
			bad = append(bad, fmt.Sprintf("%s: %dx 503 %s", a.What, a.Count, a.Code))
		}
	}
	if len(bad) > 0 {
		add(p.Name, "B over its share must get 429 with Retry-After, not: %s", strings.Join(bad, "; "))
	}
	if need429 && !got429 {
		add(p.Name, "B over its share was never answered 429 with Retry-After")
	}
}

// checkFloods checks that every refusal of B's flood is a 4xx and that B
// cannot run replays of one account past a limit.
func checkFloods(p AttackPhase, replays int, add func(string, string, ...any)) {
	for _, a := range p.Answers {
		if !a.Accepted() && (a.Status < 400 || a.Status >= 500) {
			add(p.Name, "%s: %dx %s, where a refusal must be a 4xx naming the limit", a.What, a.Count, statusText(a.Status, a.Code))
		}
	}
	running := 0
	for _, a := range p.Answers {
		if a.What == AnswerReplay && a.Accepted() {
			running += a.Count
		}
	}
	if running >= replays {
		add(p.Name, "all %d concurrent replays of one account were started: there is no limit on running replays (B's stream got %v records)", replays, p.Findings[FindingReplayDeliveries])
	}
}

// checkReadFlood checks that A's management reads stayed within their
// baseline plus MaxReadOverBaselineMillis (95th percentile) and were all
// served while B flooded reads, and that every refusal of B's reads was
// a 4xx, a 429 with Retry-After for its share (issue 23).
func checkReadFlood(p AttackPhase, add func(string, string, ...any)) {
	checkVictimReads(p, add)
	for _, a := range p.Answers {
		switch {
		case a.What != AnswerReadFlood || a.Accepted():
		case a.Status == 429 && !a.RetryAfter:
			add(p.Name, "%s: %dx 429 without Retry-After", a.What, a.Count)
		case a.Status < 400 || a.Status >= 500:
			add(p.Name, "%s: %dx %s, where a refusal must be a 4xx", a.What, a.Count, statusText(a.Status, a.Code))
		}
	}
}

// checkVictimReads checks that A's management reads during the attack
// all got 200, their p95 within the baseline's plus
// MaxReadOverBaselineMillis.
func checkVictimReads(p AttackPhase, add func(string, string, ...any)) {
	if p.Reads == nil || len(p.Reads.Flood) != len(p.Reads.Baseline) || len(p.Reads.Flood) == 0 {
		add(p.Name, "A's reads were not measured")
		return
	}
	for i, flood := range p.Reads.Flood {
		base := p.Reads.Baseline[i]
		if flood.OK < flood.Requests || flood.Requests == 0 {
			add(p.Name, "A's GET %s must all get 200 during the attack: %d of %d did", flood.Path, flood.OK, flood.Requests)
		}
		if flood.P95Millis > base.P95Millis+MaxReadOverBaselineMillis {
			add(p.Name, "A's GET %s took %.1f ms (p95) during the attack, over its baseline %.1f ms plus %d ms", flood.Path, flood.P95Millis, base.P95Millis, MaxReadOverBaselineMillis)
		}
	}
}

// CheckGuarantees returns an error wrapping ErrAttackGuarantee that lists
// the Violations, or nil when there are none.
func (r AttackReport) CheckGuarantees() error {
	v := r.Violations()
	if len(v) == 0 {
		return nil
	}
	var lines []string
	for _, phase := range append([]string{"run", "baseline"}, r.Config.Attacks...) {
		for _, msg := range v[phase] {
			lines = append(lines, phase+": "+msg)
		}
	}
	return fmt.Errorf("%w:\n  %s", ErrAttackGuarantee, strings.Join(lines, "\n  "))
}

// findingInt returns a count of the findings, as RunAttacks made it (int,
// int64) or as JSON read it back (float64); -1 when it is not a number.
func findingInt(v any) int64 {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return -1
}
