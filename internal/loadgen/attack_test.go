package loadgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestAttackConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  AttackConfig
		ok   bool
	}{
		{"defaults", AttackConfig{}, true},
		{"some attacks", AttackConfig{Attacks: []string{AttackDedup, AttackLeaks}}, true},
		{"unknown attack", AttackConfig{Attacks: []string{"dos"}}, false},
		{"negative rate", AttackConfig{Rate: -1}, false},
		{"batch over rate", AttackConfig{Rate: 10, Batch: 20}, false},
		{"negative duration", AttackConfig{SlowFor: -time.Second}, false},
	}
	for _, tt := range tests {
		if err := tt.cfg.Validate(); (err == nil) != tt.ok {
			t.Errorf("%s: Validate() = %v, want ok %t", tt.name, err, tt.ok)
		}
	}
}

func TestAttackTargetValidate(t *testing.T) {
	good := AttackTarget{URL: "http://127.0.0.1:8080", EmulatorURL: "http://127.0.0.1:4566", TokenA: "a", TokenB: "b"}
	if err := good.Validate(); err != nil {
		t.Errorf("a loopback target: %v", err)
	}
	for name, edit := range map[string]func(*AttackTarget){
		"remote API":       func(t *AttackTarget) { t.URL = "http://sluice.example.com" },
		"remote emulator":  func(t *AttackTarget) { t.EmulatorURL = "http://10.0.0.1:4566" },
		"remote metrics":   func(t *AttackTarget) { t.MetricsURL = "http://192.0.2.1:9464" },
		"one account":      func(t *AttackTarget) { t.TokenB = t.TokenA },
		"no key of B":      func(t *AttackTarget) { t.TokenB = "" },
		"not a URL at all": func(t *AttackTarget) { t.URL = "127.0.0.1:8080" },
	} {
		target := good
		edit(&target)
		if err := target.Validate(); err == nil {
			t.Errorf("%s: Validate() = nil, want an error", name)
		}
	}
}

// healthyPhase is a phase with nothing broken.
func healthyPhase(name string) AttackPhase {
	return AttackPhase{
		Name: name, Outcome: "fine", Up: true, PeakRSSBytes: 100 << 20, PeakExact: true,
		A: VictimFigures{Requests: 10, Codes: map[string]int{"202": 10}, Acked: 100, Delivered: 100,
			Ingest: Latencies{P50Millis: 2, P99Millis: 5, MaxMillis: 6}, Delivery: Latencies{P50Millis: 100, P99Millis: 200, MaxMillis: 210}},
	}
}

// fixedReport is a report of every attack, each with what issue 11 asks
// of it.
func fixedReport() AttackReport {
	r := AttackReport{
		Target:   AttackTarget{URL: "http://127.0.0.1:1", MetricsURL: "http://127.0.0.1:2", MemoryLimit: 460 << 20},
		Baseline: healthyPhase("baseline"),
		Acked:    900, Delivered: 900, Up: true,
	}
	r.Config.setDefaults()
	answers := map[string][]AttackAnswer{
		AttackLeaks: {{What: AnswerMetricsOnAPI, Status: 404, Count: 1}, {What: AnswerMetricsListener, Status: 200, Count: 1}, {What: AnswerEvilHost, Status: 201, Count: 1}},
		AttackBadJSON: {
			{What: AnswerDuplicateNames, Status: 400, Count: 1}, {What: AnswerLoneSurrogate, Status: 400, Count: 1}, {What: AnswerHugeNumber, Status: 400, Count: 1},
		},
		AttackForged:     {{What: AnswerForgedKeyDeleted, Status: 400, Count: 1}, {What: AnswerForgedDestDeleted, Status: 400, Count: 1}},
		AttackDedup:      {{What: AnswerReusedID, Status: 202, Count: 1}},
		AttackSlowloris:  {{What: AnswerSlowUpload, Status: 429, Count: 48, RetryAfter: true}},
		AttackBigBodies:  {{What: AnswerBigBody, Status: 400, Count: 16}, {What: AnswerBigBody, Status: 429, Count: 48, RetryAfter: true}},
		AttackFloods:     {{What: AnswerReplay, Status: 202, Count: 4}, {What: AnswerReplay, Status: 429, Count: 26, RetryAfter: true}},
		AttackFilterBomb: {{What: AnswerMatchesFilter, Status: 400, Count: 1}, {What: AnswerHugeServerName, Status: 400, Count: 1}, {What: AnswerLongServerName, Status: 400, Count: 1}},
	}
	findings := map[string]map[string]any{
		AttackLeaks: {FindingAPIMetricsLeak: false, FindingEvilAuditDelivered: true, FindingEvilInAudit: false, FindingReplacedSecret: 0},
		AttackDedup: {FindingStored: 1, FindingDuplicates: 0},
	}
	for _, name := range AllAttacks() {
		p := healthyPhase(name)
		p.Answers, p.Findings = answers[name], findings[name]
		read := func(p95 float64) []ReadFigures {
			return []ReadFigures{{Path: "/api_keys", Requests: 200, OK: 200, Latencies: Latencies{P50Millis: p95 / 3, P95Millis: p95, MaxMillis: 2 * p95}}}
		}
		if name == AttackFanOut {
			p.Reads = &ReadFloodFigures{Baseline: read(1.5), Flood: read(12.0)}
		}
		if name == AttackReadFlood {
			p.Reads = &ReadFloodFigures{Baseline: read(1.5), Flood: read(26.7)}
			p.Answers = []AttackAnswer{{What: AnswerReadFlood, Status: 200, Count: 11606}, {What: AnswerReadFlood, Status: 429, Count: 57752, RetryAfter: true}}
		}
		r.Attacks = append(r.Attacks, p)
	}
	return r
}

func TestAttackReportViolations(t *testing.T) {
	fixed := fixedReport()
	if v := fixed.Violations(); len(v) > 0 {
		t.Fatalf("a report of what issue 11 asks has violations: %v", v)
	}
	if err := fixed.CheckGuarantees(); err != nil {
		t.Fatalf("CheckGuarantees: %v", err)
	}
	tests := []struct {
		name  string
		phase string
		edit  func(*AttackReport, *AttackPhase)
		want  string
	}{
		{"process down", AttackSlowloris, func(_ *AttackReport, p *AttackPhase) { p.Up = false }, "process was down"},
		{"A refused", AttackSlowloris, func(_ *AttackReport, p *AttackPhase) { p.A.Codes = map[string]int{"202": 4, "503": 6} }, "202x4 503x6"},
		{"A slow", AttackBigBodies, func(_ *AttackReport, p *AttackPhase) { p.A.Ingest.P99Millis = 1500 }, "1500 ms (p99"},
		{"A's delivery late", AttackFloods, func(_ *AttackReport, p *AttackPhase) { p.A.Delivery.P99Millis = 1300 }, "over the baseline's 200 ms"},
		{"memory", AttackBigBodies, func(_ *AttackReport, p *AttackPhase) { p.PeakRSSBytes = 1 << 30 }, "1024 MiB is over the memory limit 460 MiB"},
		{"lost events", "run", func(r *AttackReport, _ *AttackPhase) { r.Missing = 3 }, "3 of the 900 events"},
		{"cut short", "run", func(r *AttackReport, _ *AttackPhase) { r.CutShort = "context deadline exceeded" }, "cut short (context deadline exceeded)"},
		{"metrics on the API", AttackLeaks, func(_ *AttackReport, p *AttackPhase) { p.Answers[0].Status = 200 }, "/metrics is served on the API listener"},
		{"evil host", AttackLeaks, func(_ *AttackReport, p *AttackPhase) { p.Findings[FindingEvilInAudit] = true }, "carries the request's Host"},
		{"replaced secret", AttackLeaks, func(_ *AttackReport, p *AttackPhase) { p.Findings[FindingReplacedSecret] = 2 }, "in clear in 2 files"},
		{"duplicate names", AttackBadJSON, func(_ *AttackReport, p *AttackPhase) { p.Answers[0].Status = 202 }, "duplicate member names must be refused with a 4xx: got 202"},
		{"forged", AttackForged, func(_ *AttackReport, p *AttackPhase) { p.Answers[1].Status = 202 }, "event_destination_deleted.v0 must be refused"},
		{"dedup", AttackDedup, func(_ *AttackReport, p *AttackPhase) {
			p.Findings = map[string]any{FindingStored: 0, FindingDuplicates: 1}
		}, "stored 0, duplicates 1"},
		{"503 for B", AttackSlowloris, func(_ *AttackReport, p *AttackPhase) { p.Answers[0].Status = 503 }, "48x 503"},
		{"big body stored", AttackBigBodies, func(_ *AttackReport, p *AttackPhase) { p.Answers[0].Status = 202 }, "bodies of invalid events were accepted"},
		{"no replay limit", AttackFloods, func(_ *AttackReport, p *AttackPhase) { p.Answers[1].Status = 202 }, "all 30 concurrent replays"},
		{"A's reads slow in the fan-out", AttackFanOut, func(_ *AttackReport, p *AttackPhase) { p.Reads.Flood[0].P95Millis = 80 }, "took 80.0 ms (p95) during the attack, over its baseline 1.5 ms plus 50 ms"},
		{"fan-out not stopped", AttackFanOut, func(_ *AttackReport, p *AttackPhase) {
			p.Findings = map[string]any{FindingFanOutStopSeconds: 4.5}
		}, "went on 4.5 s after its subscriptions were deleted"},
		{"matches filter", AttackFilterBomb, func(_ *AttackReport, p *AttackPhase) { p.Answers[0].Status = 201 }, "matches filter must be refused with a 4xx: got 201"},
	}
	for _, tt := range tests {
		r := fixedReport()
		var phase *AttackPhase
		for i := range r.Attacks {
			if r.Attacks[i].Name == tt.phase {
				phase = &r.Attacks[i]
			}
		}
		tt.edit(&r, phase)
		got := strings.Join(r.Violations()[tt.phase], "\n")
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s: violations of %s are %q, want one saying %q", tt.name, tt.phase, got, tt.want)
		}
		if err := r.CheckGuarantees(); !errors.Is(err, ErrAttackGuarantee) || !strings.Contains(err.Error(), tt.phase+": ") {
			t.Errorf("%s: CheckGuarantees() = %v, want ErrAttackGuarantee naming %s", tt.name, err, tt.phase)
		}
	}
}

func TestAttackReportForms(t *testing.T) {
	r := fixedReport()
	var text bytes.Buffer
	if err := r.Format(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range append([]string{"baseline", "peak RSS MiB", "202x10", "2/5/6", "100/200/210", "memory limit 460 MiB", "429 (Retry-After)"}, AllAttacks()...) {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the table has no %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var decoded AttackReport
	if err := json.Unmarshal(js.Bytes(), &decoded); err != nil {
		t.Fatal(err)
	}
	if len(decoded.Attacks) != len(AllAttacks()) || decoded.Attacks[0].A.Codes["202"] != 10 {
		t.Errorf("the JSON report decodes to %+v", decoded)
	}
	// Counts read back from JSON are float64: the checks take them.
	if v := decoded.Violations(); len(v) > 0 {
		t.Errorf("the report read back from JSON has violations: %v", v)
	}
	if strings.Contains(js.String(), "token") {
		t.Errorf("the JSON report names a token:\n%s", js.String())
	}
}

func TestAttackReportMerge(t *testing.T) {
	first, second := fixedReport(), fixedReport()
	first.Attacks, first.Config.Attacks = first.Attacks[:1], first.Config.Attacks[:1]
	second.Attacks, second.Config.Attacks = second.Attacks[1:2], second.Config.Attacks[1:2]
	second.Attacks[0].BaselineDelivery = Latencies{P99Millis: 900}
	second.Attacks[0].A.Delivery.P99Millis = 1800 // within its own baseline plus a second
	second.Up, second.Missing = false, 2
	var merged AttackReport
	merged.Merge(first)
	merged.Merge(second)
	if len(merged.Attacks) != 2 || merged.Acked != 1800 || merged.Missing != 2 || merged.Up || len(merged.Config.Attacks) != 2 {
		t.Errorf("merged: %d attacks %v, acked %d, missing %d, up %t", len(merged.Attacks), merged.Config.Attacks, merged.Acked, merged.Missing, merged.Up)
	}
	v := merged.Violations()
	if len(v[merged.Attacks[1].Name]) > 0 {
		t.Errorf("the second run's attack is checked against the first run's baseline: %v", v)
	}
	if len(v["run"]) != 2 {
		t.Errorf("violations of the run: %v, want the process down and the events missing", v["run"])
	}
}
