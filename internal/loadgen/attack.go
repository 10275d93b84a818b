package loadgen

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/sluicehq/sluice/internal/retry"
	"github.com/sluicehq/sluice/internal/tail"
)

// attackRegion and attackAWSAccount make the ARNs of the attack's
// destinations: `sluice serve --dev` accepts any.
const (
	attackRegion     = "us-east-1"
	attackAWSAccount = "123456789012"
	// processSample is how often the resident memory is sampled where the
	// peak cannot be reset.
	processSample = 100 * time.Millisecond
)

// attackRun is one run of RunAttacks.
type attackRun struct {
	cfg      AttackConfig
	target   AttackTarget
	progress io.Writer

	a, b   *apiClient
	victim *victim

	// A's destination and subscription, and the secrets its destination
	// was given: first (replaced) and current.
	aStream, aDestID, aSubID string
	secretOld, secretNew     string
	aAccountID               string
	// runID names this run's resources.
	runID string
	// figures are A's figures of each phase, by name.
	figures map[string]*phaseFigures
}

// RunAttacks plays each attack of cfg from account B against the sluice of
// target while account A publishes at a steady rate into a Kinesis
// destination of the emulator, and measures, per attack, what sluice
// answered, A's ingest and delivery, and the process's peak resident
// memory, CPU time and liveness. It returns an error only when the run
// cannot start (the target is unreachable, A's destination cannot be
// made); an attack that fails, or takes the process down, is reported.
func RunAttacks(ctx context.Context, cfg AttackConfig, target AttackTarget, progress io.Writer) (AttackReport, error) {
	cfg.setDefaults()
	if err := errors.Join(cfg.Validate(), target.Validate()); err != nil {
		return AttackReport{}, err
	}
	r := &attackRun{
		cfg: cfg, target: target, progress: progress,
		a:       newAPIClient(target.URL, target.TokenA, victimConcurrency, cfg.RequestTimeout),
		b:       newAPIClient(target.URL, target.TokenB, 16, cfg.RequestTimeout),
		runID:   randomHex(4),
		figures: map[string]*phaseFigures{},
	}
	defer r.a.close()
	defer r.b.close()
	r.victim = newVictim(r.a, cfg.Rate, cfg.Batch)
	report := AttackReport{Target: target, Config: cfg}

	if err := r.setUpVictim(ctx); err != nil {
		return report, err
	}
	// Every goroutine of the run ends before it returns: the deferred
	// cancels run before this wait.
	var wg sync.WaitGroup
	defer wg.Wait()
	publishCtx, stopPublishing := context.WithCancel(ctx)
	defer stopPublishing()
	wg.Go(func() { r.victim.publish(publishCtx) })
	// The emulator makes A's stream with the first records delivered to
	// it; it can be read from then on.
	if err := r.waitStream(ctx); err != nil {
		return report, err
	}
	followCtx, stopFollowing := context.WithCancel(ctx)
	defer stopFollowing()
	reader, err := tail.New(followCtx, tail.Config{ARN: kinesisARN(r.aStream), Since: time.Now().Add(-time.Hour), Follow: true, Poll: 100 * time.Millisecond, AWS: emulatorAWS(target.EmulatorURL)})
	if err != nil {
		return report, err
	}
	followErr := make(chan error, 1)
	wg.Go(func() { followErr <- r.victim.follow(followCtx, reader) })

	if err := r.waitDelivering(ctx, followErr); err != nil {
		return report, err
	}
	r.logf("A's route delivers; measuring the baseline for %s", cfg.Baseline)
	report.Baseline = r.phase(ctx, "baseline", func(ctx context.Context) attackOutcome {
		if retry.Sleep(ctx, cfg.Baseline) != nil {
			return attackOutcome{err: ctx.Err()}
		}
		return attackOutcome{summary: "no attack"}
	})
	up := report.Baseline.Up
	for _, name := range cfg.Attacks {
		if ctx.Err() != nil {
			break
		}
		if !up {
			report.Attacks = append(report.Attacks, AttackPhase{Name: name, Outcome: "not played: the process is down"})
			continue
		}
		// What the last attack left behind (memory, a backlog) is let go
		// before the next, so that each figure is of its own attack.
		r.quiesce(ctx)
		r.logf("attack %s", name)
		p := r.phase(ctx, name, r.play(name))
		r.logf("attack %s: %s; A: %s, ingest p99 %.0f ms, delivery p99 %.0f ms; peak RSS %d MiB, CPU %.1f s, up %t",
			name, p.Outcome, codesText(p.A.Codes, p.A.NotSent), p.A.Ingest.P99Millis, p.A.Delivery.P99Millis, p.PeakRSSBytes>>20, p.CPUSeconds, p.Up)
		report.Attacks = append(report.Attacks, p)
		up = p.Up
	}
	stopPublishing()
	r.victim.inFlight.Wait()
	r.drain(ctx, followErr)
	stopFollowing()

	if err := ctx.Err(); err != nil {
		report.CutShort = err.Error()
	}
	report.Acked, report.Delivered, _ = r.victim.counts()
	report.Missing = report.Acked - report.Delivered
	report.Up = r.alive(ctx)
	// A request sent in a phase may be answered, and its events
	// delivered, after it: they count in the phase they were sent in.
	for _, p := range append([]*AttackPhase{&report.Baseline}, pointers(report.Attacks)...) {
		if f := r.figures[p.Name]; f != nil {
			p.A = f.snapshot()
			p.A.Missing = r.victim.missingIn(f)
		}
		if p != &report.Baseline {
			p.BaselineDelivery = report.Baseline.A.Delivery
		}
	}
	return report, nil
}

// attackOutcome is what an attack reports of itself.
type attackOutcome struct {
	summary  string
	answers  []AttackAnswer
	findings map[string]any
	reads    *ReadFloodFigures // the read flood's
	err      error
}

// phase runs play while measuring A and the process, then goes on
// measuring for cfg.Settle.
func (r *attackRun) phase(ctx context.Context, name string, play func(context.Context) attackOutcome) AttackPhase {
	figures := newPhaseFigures()
	r.figures[name] = figures
	start := time.Now()
	exact := r.target.PID > 0 && resetPeak(r.target.PID)
	before, _ := readProc(r.target.PID)
	sampleCtx, stopSampling := context.WithCancel(ctx)
	sampled := make(chan uint64, 1)
	go func() { sampled <- r.sampleRSS(sampleCtx) }()

	r.victim.phase.Store(figures)
	out := play(ctx)
	_ = retry.Sleep(ctx, r.cfg.Settle)
	r.victim.phase.Store(nil)

	stopSampling()
	peak := <-sampled
	after, procErr := readProc(r.target.PID)
	p := AttackPhase{
		Name: name, Outcome: out.summary, Answers: out.answers, Findings: out.findings, Reads: out.reads,
		Seconds: time.Since(start).Seconds(), A: figures.snapshot(),
		PeakExact: exact && procErr == nil,
	}
	if out.err != nil {
		p.Error = out.err.Error()
	}
	if procErr == nil {
		p.CPUSeconds = (after.cpu - before.cpu).Seconds()
		if exact {
			peak = after.peak
		}
	}
	p.PeakRSSBytes = peak
	p.Up = r.alive(ctx)
	return p
}

// snapshot returns the figures as the report has them.
func (f *phaseFigures) snapshot() VictimFigures {
	f.mu.Lock()
	defer f.mu.Unlock()
	codes := make(map[string]int, len(f.codes))
	for c, n := range f.codes {
		codes[strconv.Itoa(c)] = n
	}
	return VictimFigures{Requests: f.requests, Codes: codes, NotSent: f.notSent, Ingest: f.ingest.latencies(), Acked: f.acked, Delivered: f.delivered, Delivery: f.delivery.latencies()}
}

// sampleRSS returns the highest resident memory of the process sampled
// until ctx ends.
func (r *attackRun) sampleRSS(ctx context.Context) uint64 {
	if r.target.PID <= 0 {
		return 0
	}
	var peak uint64
	tick := time.NewTicker(processSample)
	defer tick.Stop()
	for {
		if f, err := readProc(r.target.PID); err == nil {
			peak = max(peak, f.rss)
		}
		select {
		case <-ctx.Done():
			return peak
		case <-tick.C:
		}
	}
}

// alive reports whether the process is running and answers /healthz.
func (r *attackRun) alive(ctx context.Context) bool {
	if r.target.PID > 0 {
		if _, err := readProc(r.target.PID); err != nil {
			return false
		}
	}
	// Asked even when ctx has ended: a run cut short does not make the
	// process down.
	probe := &apiClient{http: r.a.http, base: r.target.URL, timeout: 10 * time.Second}
	return probe.do(context.WithoutCancel(ctx), http.MethodGet, "/healthz", nil, nil).status == http.StatusOK
}

// setUpVictim makes A's Kinesis destination, gives it a second secret (so
// that the first is a replaced one) and a subscription of A's HTTP
// requests and of the destination-created audit events.
func (r *attackRun) setUpVictim(ctx context.Context) error {
	r.aStream = "sluice-attack-a-" + r.runID
	r.secretOld, r.secretNew = "attackOldSecret"+randomHex(12), "attackNewSecret"+randomHex(12)
	id, err := r.a.mustCreate(ctx, "/event_destinations", destinationBody("attack victim", r.aStream, r.secretOld))
	if err != nil {
		return fmt.Errorf("creating A's destination: %w", err)
	}
	r.aDestID = id
	if a := r.a.do(ctx, http.MethodPatch, "/event_destinations/"+id, []byte(`{"target":`+targetJSON(r.aStream, r.secretNew)+`}`), nil); !a.ok() {
		return fmt.Errorf("replacing the secret of A's destination: %s %s", a.text(), a.body)
	}
	sub := fmt.Sprintf(`{"description":"attack victim","sources":[{"type":"http_request_complete.v0"},{"type":"event_destination_created.v0"}],"destination_ids":[%q]}`, id)
	if r.aSubID, err = r.a.mustCreate(ctx, "/event_subscriptions", []byte(sub)); err != nil {
		return fmt.Errorf("creating A's subscription: %w", err)
	}
	me := r.a.do(ctx, http.MethodGet, "/event_destinations/"+id, nil, nil)
	r.aAccountID = jsonString(me.body, "account_id")
	return nil
}

// waitStream waits until A's stream has records.
func (r *attackRun) waitStream(ctx context.Context) error {
	deadline := time.Now().Add(60 * time.Second)
	for r.emulatorRecords(ctx, r.aStream) <= 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("none of A's events reached its stream %s in the emulator at %s within 60s of its subscription: is that the emulator of this sluice's --dev?", r.aStream, r.target.EmulatorURL)
		}
		if retry.Sleep(ctx, 100*time.Millisecond) != nil {
			return ctx.Err()
		}
	}
	return nil
}

// waitDelivering waits until one of A's events has been delivered: A's
// route is running.
func (r *attackRun) waitDelivering(ctx context.Context, followErr <-chan error) error {
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, _, delivered := r.victim.counts(); delivered > 0 {
			return nil
		}
		select {
		case err := <-followErr:
			return fmt.Errorf("reading A's destination: %w", err)
		case <-deadline.C:
			return errors.New("none of A's events was delivered within 60s of its subscription: is the emulator's URL that of this sluice's --dev?")
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// quietTimeout bounds the wait between attacks for A's deliveries to
// catch up.
const quietTimeout = 20 * time.Second

// quiesce waits, up to quietTimeout, until A's deliveries have caught up
// with what it was answered 202 for.
func (r *attackRun) quiesce(ctx context.Context) {
	deadline := time.Now().Add(quietTimeout)
	for {
		acked, delivered, _ := r.victim.counts()
		// A's requests of the last quarter second may still be on their
		// way.
		if acked-delivered <= r.cfg.Rate/2 || time.Now().After(deadline) || retry.Sleep(ctx, 100*time.Millisecond) != nil {
			return
		}
	}
}

// drain waits until every event A got 202 for is delivered, the drain
// timeout passes, or the process is down.
func (r *attackRun) drain(ctx context.Context, followErr <-chan error) {
	deadline := time.NewTimer(r.cfg.DrainTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		acked, delivered, _ := r.victim.counts()
		if acked == delivered {
			return
		}
		select {
		case err := <-followErr:
			r.logf("reading A's destination stopped: %v", err)
			return
		case <-deadline.C:
			r.logf("%d of A's acknowledged events still not delivered after %s", acked-delivered, r.cfg.DrainTimeout)
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (r *attackRun) logf(format string, args ...any) {
	if r.progress != nil {
		fmt.Fprintf(r.progress, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
	}
}

// emulatorAWS is the AWS configuration that reaches the emulator, which
// takes any keys.
func emulatorAWS(endpoint string) *aws.Config {
	return &aws.Config{BaseEndpoint: aws.String(endpoint), Credentials: credentials.NewStaticCredentialsProvider("sluice-dev", "sluice-dev", "")}
}

func kinesisARN(stream string) string {
	return fmt.Sprintf("arn:aws:kinesis:%s:%s:stream/%s", attackRegion, attackAWSAccount, stream)
}

// targetJSON is a Kinesis target with an access key whose secret is
// secret.
func targetJSON(stream, secret string) string {
	return fmt.Sprintf(`{"kinesis":{"stream_arn":%q,"auth":{"creds":{"aws_access_key_id":"AKIAATTACK0000000001","aws_secret_access_key":%q}}}}`, kinesisARN(stream), secret)
}

func destinationBody(description, stream, secret string) []byte {
	return []byte(fmt.Sprintf(`{"description":%q,"target":%s}`, description, targetJSON(stream, secret)))
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// jsonString returns the string member name of the JSON object b, or "".
func jsonString(b []byte, name string) string {
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return ""
	}
	s, _ := m[name].(string)
	return s
}

// pointers returns pointers to the elements of s.
func pointers[T any](s []T) []*T {
	out := make([]*T, len(s))
	for i := range s {
		out[i] = &s[i]
	}
	return out
}
