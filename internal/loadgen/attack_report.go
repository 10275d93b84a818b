package loadgen

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// AttackAnswer is what sluice answered one kind of request of an attack.
type AttackAnswer struct {
	// What the request was, such as "subscription with a replace filter".
	What string `json:"what"`
	// Status is the HTTP status; 0 when no answer came (the Detail says
	// why).
	Status int `json:"status"`
	// Code is the error_code of an error answer.
	Code string `json:"error_code,omitempty"`
	// Count is how many requests got this answer.
	Count int `json:"count"`
	// RetryAfter says whether the answer had a Retry-After header.
	RetryAfter bool `json:"retry_after,omitempty"`
	// Detail is the error's message, or what happened.
	Detail string `json:"detail,omitempty"`
}

// Accepted reports whether sluice accepted the request (a 2xx).
func (a AttackAnswer) Accepted() bool { return a.Status >= 200 && a.Status < 300 }

// VictimFigures are account A's figures during a phase.
type VictimFigures struct {
	// Requests is A's requests sent in the phase, by status ("0" for no
	// answer), and NotSent the batches that were due while A had
	// victimConcurrency requests waiting.
	Requests int            `json:"requests"`
	Codes    map[string]int `json:"codes"`
	NotSent  int            `json:"not_sent"`
	// Ingest is the latency of A's requests that were answered.
	Ingest Latencies `json:"ingest"`
	// Acked is the events A got 202 for; Delivered those delivered (of
	// every event sent in the phase); Missing those acked and never
	// delivered by the end of the run.
	Acked     int `json:"acked"`
	Delivered int `json:"delivered"`
	Missing   int `json:"missing"`
	// Delivery is the latency from sending to the destination's arrival
	// time of the events sent in the phase.
	Delivery Latencies `json:"delivery"`
}

// AllAccepted reports whether every request of A in the phase got 202.
func (f VictimFigures) AllAccepted() bool {
	return f.Requests > 0 && f.Codes["202"] == f.Requests && f.NotSent == 0
}

// AttackPhase is one attack (or the baseline) and what it did.
type AttackPhase struct {
	Name string `json:"name"`
	// Outcome says in a line what sluice did with the attack.
	Outcome string `json:"outcome"`
	// Answers are sluice's answers to the attack's requests.
	Answers []AttackAnswer `json:"answers,omitempty"`
	// Findings are the attack's other observations, by name.
	Findings map[string]any `json:"findings,omitempty"`
	// Reads are A's management reads without and with the read flood.
	Reads *ReadFloodFigures `json:"reads,omitempty"`
	// Error is why the attack could not be played to its end.
	Error string `json:"error,omitempty"`
	// Seconds is how long the phase lasted, settling included.
	Seconds float64 `json:"seconds"`
	// A is the victim's figures; BaselineDelivery A's delivery latency in
	// the baseline this phase is compared with.
	A                VictimFigures `json:"a"`
	BaselineDelivery Latencies     `json:"baseline_delivery"`
	// PeakRSSBytes is the process's peak resident memory during the
	// phase (VmHWM, reset at its start where allowed, else the highest
	// VmRSS sampled); CPUSeconds the CPU time it used.
	PeakRSSBytes uint64  `json:"peak_rss_bytes"`
	PeakExact    bool    `json:"peak_exact"`
	CPUSeconds   float64 `json:"cpu_seconds"`
	// Up says whether the process was alive and served /healthz at the
	// end of the phase.
	Up bool `json:"up"`
}

// Answer returns the answer to the request named what, and false when
// there was none.
func (p AttackPhase) Answer(what string) (AttackAnswer, bool) {
	i := slices.IndexFunc(p.Answers, func(a AttackAnswer) bool { return a.What == what })
	if i < 0 {
		return AttackAnswer{}, false
	}
	return p.Answers[i], true
}

// AttackReport is the outcome of RunAttacks.
type AttackReport struct {
	Target AttackTarget `json:"target"`
	Config AttackConfig `json:"config"`
	// Baseline is A's figures with no attack; Attacks one phase per
	// attack, in the order played.
	Baseline AttackPhase   `json:"baseline"`
	Attacks  []AttackPhase `json:"attacks"`
	// Acked is every event A got 202 for, Delivered how many of those its
	// destination received by the end, Missing the others.
	Acked     int `json:"acked"`
	Delivered int `json:"delivered"`
	Missing   int `json:"missing"`
	// Up says whether the process was up at the end.
	Up bool `json:"up"`
	// CutShort, when set, says why the run ended before it had played
	// every attack and waited for A's deliveries (its context ended): the
	// figures of the phases it cut are partial.
	CutShort string `json:"cut_short,omitempty"`
}

// Merge appends the attacks of other, a run on another process, to r's,
// and adds up what A sent and got delivered: each phase keeps the
// baseline it was measured beside.
func (r *AttackReport) Merge(other AttackReport) {
	if len(r.Attacks) == 0 && r.Baseline.Name == "" {
		r.Target, r.Config, r.Baseline, r.Up = other.Target, other.Config, other.Baseline, true
		r.Config.Attacks = nil
	}
	r.Config.Attacks = append(r.Config.Attacks, other.Config.Attacks...)
	r.Attacks = append(r.Attacks, other.Attacks...)
	r.Acked += other.Acked
	r.Delivered += other.Delivered
	r.Missing += other.Missing
	r.Up = r.Up && other.Up
	if other.CutShort != "" {
		r.CutShort = other.CutShort
	}
}

// Phase returns the phase of the attack named name.
func (r AttackReport) Phase(name string) (AttackPhase, bool) {
	i := slices.IndexFunc(r.Attacks, func(p AttackPhase) bool { return p.Name == name })
	if i < 0 {
		return AttackPhase{}, false
	}
	return r.Attacks[i], true
}

// Format writes the report as two tables: the process and A per phase,
// then each attack's answers and findings.
func (r AttackReport) Format(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tup\tpeak RSS MiB\tCPU s\tA reqs\tA codes\tA ingest p50/p99/max ms\tA acked\tA delivered\tA missing\tA delivery p50/p99/max ms\tbaseline p99 ms\t")
	for _, p := range append([]AttackPhase{r.Baseline}, r.Attacks...) {
		peak := fmt.Sprintf("%.0f", float64(p.PeakRSSBytes)/(1<<20))
		if !p.PeakExact {
			peak = "~" + peak
		}
		base := "-"
		if p.BaselineDelivery != (Latencies{}) {
			base = fmt.Sprintf("%.0f", p.BaselineDelivery.P99Millis)
		}
		fmt.Fprintf(tw, "%s\t%t\t%s\t%.1f\t%d\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t\n", p.Name, p.Up, peak, p.CPUSeconds,
			p.A.Requests, codesText(p.A.Codes, p.A.NotSent), latencyText(p.A.Ingest), p.A.Acked, p.A.Delivered, p.A.Missing, latencyText(p.A.Delivery), base)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.CutShort != "" {
		fmt.Fprintf(w, "\nthe run was cut short (%s): the phases it cut have partial figures\n", r.CutShort)
	}
	fmt.Fprintf(w, "\nA: %d events acknowledged, %d delivered, %d missing; the process was up at the end: %t; memory limit %s\n\n",
		r.Acked, r.Delivered, r.Missing, r.Up, limitText(r.Target.MemoryLimit))
	for _, p := range r.Attacks {
		fmt.Fprintf(w, "%s: %s\n", p.Name, p.Outcome)
		if p.Error != "" {
			fmt.Fprintf(w, "    error: %s\n", p.Error)
		}
		for _, a := range p.Answers {
			line := fmt.Sprintf("    %s: %dx %s", a.What, a.Count, statusText(a.Status, a.Code))
			if a.RetryAfter {
				line += " (Retry-After)"
			}
			if a.Detail != "" {
				line += ": " + truncate(a.Detail, 160)
			}
			fmt.Fprintln(w, line)
		}
		keys := make([]string, 0, len(p.Findings))
		for k := range p.Findings {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "    %s: %v\n", k, p.Findings[k])
		}
	}
	return nil
}

// WriteJSON writes the report as indented JSON.
func (r AttackReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func codesText(codes map[string]int, notSent int) string {
	keys := make([]string, 0, len(codes))
	for k := range codes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+"x"+strconv.Itoa(codes[k]))
	}
	if notSent > 0 {
		parts = append(parts, "unsent x"+strconv.Itoa(notSent))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

func latencyText(l Latencies) string {
	return fmt.Sprintf("%.0f/%.0f/%.0f", l.P50Millis, l.P99Millis, l.MaxMillis)
}

func statusText(status int, code string) string {
	if status == 0 {
		return "no answer"
	}
	if code != "" {
		return strconv.Itoa(status) + " " + code
	}
	return strconv.Itoa(status)
}

func limitText(b int64) string {
	if b <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%d MiB", b>>20)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
