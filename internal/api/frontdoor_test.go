package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
)

// frontDoorEnv is a real API with two accounts: A (the env's own) and B,
// the attacker, whose authentications it counts.
type frontDoorEnv struct {
	*testEnv
	tokenB   string
	accountB atomic.Value // string
	authB    atomic.Int64 // requests of B authenticated
}

// countingKeys counts the authentications of the account in fd.accountB.
type countingKeys struct {
	apiconv.Keys
	fd *frontDoorEnv
}

func (k countingKeys) Authenticate(ctx context.Context, token string) (store.APIKey, error) {
	key, err := k.Keys.Authenticate(ctx, token)
	if b, _ := k.fd.accountB.Load().(string); err == nil && key.AccountID == b {
		k.fd.authB.Add(1)
	}
	return key, err
}

func newFrontDoorEnv(t *testing.T, cfg api.Config) *frontDoorEnv {
	t.Helper()
	fd := &frontDoorEnv{}
	stack := apitest.Start(t, apitest.WithConfig(cfg), apitest.WithDeps(func(deps *api.Deps, _ jetstream.JetStream) {
		deps.Keys = countingKeys{Keys: deps.Keys, fd: fd}
	}))
	fd.testEnv = envOf(t, stack)
	ctx := t.Context()
	b, err := stack.Store.CreateAccount(ctx, "attacker")
	if err != nil {
		t.Fatal(err)
	}
	key, err := stack.Store.CreateAPIKey(ctx, b.ID, store.APIKeyInput{Description: "b"}, "")
	if err != nil {
		t.Fatal(err)
	}
	fd.accountB.Store(b.ID)
	fd.tokenB = key.Token
	return fd
}

// answer is what a request got: its status, Retry-After and error code.
type answer struct {
	status     int
	retryAfter string
	code       string
	err        error
}

// send posts body (ContentLength -1 when it is not a *bytes.Reader: sent
// chunked) as token to POST /events with a plain client, which neither
// buffers nor checks the exchange. It does not use t.
func send(ctx context.Context, url, token string, body io.Reader) answer {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/events", body)
	if err != nil {
		return answer{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Service-Version", "2")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	var e struct {
		ErrorCode string `json:"error_code"`
	}
	_ = json.Unmarshal(out, &e)
	return answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), code: e.ErrorCode, err: err}
}

// trickle is a chunked body that sends "[" and then a space every
// interval until ctx ends: a slowloris upload.
func trickle(ctx context.Context, interval time.Duration) io.Reader {
	r, w := io.Pipe()
	go func() {
		defer w.CloseWithError(errors.New("upload stopped"))
		if _, err := w.Write([]byte("[")); err != nil {
			return
		}
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if _, err := w.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	return r
}

// attack sends n requests of B at once, the body of each from body, and
// collects their answers; wait waits for them all.
type attack struct {
	mu      sync.Mutex
	answers []answer
	wg      sync.WaitGroup
}

func startAttack(ctx context.Context, fd *frontDoorEnv, n int, body func() io.Reader) *attack {
	a := &attack{}
	for range n {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			got := send(ctx, fd.url, fd.tokenB, body())
			a.mu.Lock()
			a.answers = append(a.answers, got)
			a.mu.Unlock()
		}()
	}
	return a
}

func (a *attack) answered() []answer {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.answers)
}

// latencies are A's ingest latencies under an attack.
type latencies []time.Duration

func (l latencies) String() string {
	s := slices.Clone(l)
	slices.Sort(s)
	if len(s) == 0 {
		return "no requests"
	}
	return fmt.Sprintf("%d requests, p50 %s, max %s", len(s), s[len(s)/2].Round(time.Millisecond), s[len(s)-1].Round(time.Millisecond))
}

// ingestAsA posts small batches of A, one after another, for d, each of
// which must get 202 within latencyBound (a second without the race
// detector).
func ingestAsA(t *testing.T, fd *frontDoorEnv, d time.Duration) latencies {
	t.Helper()
	var got latencies
	for end := time.Now().Add(d); time.Now().Before(end); {
		body := apitest.MustJSON(t, apitest.Samples(t, uint64(len(got)+1), 5))
		start := time.Now()
		resp, out := fd.post(t, body, nil)
		took := time.Since(start)
		got = append(got, took)
		if resp.StatusCode != http.StatusAccepted || took > latencyBound {
			t.Fatalf("A's POST /events %d under attack: status %d in %s, want 202 within %s (%s so far): %s", len(got), resp.StatusCode, took, time.Duration(latencyBound), got, out)
		}
	}
	return got
}

// TestFrontDoorSlowlorisLeavesOtherAccountsIngesting: 64 slow uploads of
// account B (a byte every 200 ms) take only B's share of the 64 ingest
// slots; the others are refused at once with 429 and Retry-After, and A's
// POSTs get 202 within a second all along.
func TestFrontDoorSlowlorisLeavesOtherAccountsIngesting(t *testing.T) {
	fd := newFrontDoorEnv(t, api.Config{})
	ctx, stop := context.WithCancel(t.Context())
	b := startAttack(ctx, fd, apiconv.DefaultMaxInFlight, func() io.Reader { return trickle(ctx, 200*time.Millisecond) })
	t.Cleanup(func() { stop(); b.wg.Wait() })
	check.Eventually(t, 30*time.Second, "B's 64 requests authenticated", func() (int64, bool) {
		authenticated := fd.authB.Load()
		return authenticated, authenticated == apiconv.DefaultMaxInFlight
	})

	lat := ingestAsA(t, fd, 3*time.Second)
	t.Logf("A's ingest during B's slowloris: %s", lat)

	refused := b.answered()
	share := apiconv.DefaultMaxInFlight / 4
	if len(refused) != apiconv.DefaultMaxInFlight-share {
		t.Fatalf("%d of B's requests answered, want the %d beyond its share of %d: %+v", len(refused), apiconv.DefaultMaxInFlight-share, share, refused)
	}
	for _, a := range refused {
		if a.status != http.StatusTooManyRequests || a.code != "ERR_SLUICE_130" || a.retryAfter == "" {
			t.Fatalf("B's request beyond its share: %+v, want 429 ERR_SLUICE_130 with Retry-After", a)
		}
	}
	if got := apitest.CounterValue(t, fd.reg, "sluice_ingest_refused_requests_total", "reason", "account_requests"); got != float64(len(refused)) {
		t.Fatalf("refusals counted for account_requests: %v, want %d", got, len(refused))
	}
}

// TestFrontDoorCutsSlowBodies: a body that brings less than the minimum in
// a window is cut with 408; one slow but above the minimum is stored. The
// window is a second, so that the slow body's writer, stalled a few
// hundred milliseconds by a loaded machine, still brings twice the
// minimum in each.
func TestFrontDoorCutsSlowBodies(t *testing.T) {
	const window = time.Second
	fd := newFrontDoorEnv(t, api.Config{DoorConfig: apiconv.DoorConfig{MinBodyRate: 1000, BodyRateWindow: window}})
	ctx, stop := context.WithCancel(t.Context())
	defer stop()

	start := time.Now()
	slowCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	got := send(slowCtx, fd.url, fd.tokenB, trickle(slowCtx, 100*time.Millisecond))
	took := time.Since(start)
	if got.status != http.StatusRequestTimeout || got.code != "ERR_SLUICE_132" {
		t.Fatalf("slowloris body: %+v, want 408 ERR_SLUICE_132", got)
	}
	if took > 5*window {
		t.Fatalf("slowloris body cut after %s, want within about %s", took, window)
	}
	t.Logf("a byte every 100 ms, minimum 1,000 bytes every %s: cut after %s", window, took.Round(time.Millisecond))

	// 2,000 bytes/s, in pieces of 200 bytes: slow, over several windows,
	// and above the minimum.
	body := apitest.MustJSON(t, apitest.Samples(t, 3, 8))
	r, w := io.Pipe()
	go func() {
		for rest := body; len(rest) > 0; {
			n := min(200, len(rest))
			if _, err := w.Write(rest[:n]); err != nil {
				return
			}
			rest = rest[n:]
			select {
			case <-ctx.Done():
				w.CloseWithError(ctx.Err())
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
		w.Close()
	}()
	start = time.Now()
	if got := send(ctx, fd.url, fd.token, r); got.status != http.StatusAccepted {
		t.Fatalf("a slow body above the minimum rate: %+v, want 202", got)
	}
	t.Logf("%d bytes at 2,000 bytes/s stored after %s", len(body), time.Since(start).Round(time.Millisecond))
	if got := apitest.CounterValue(t, fd.reg, "sluice_ingest_refused_requests_total", "reason", "too_slow"); got != 1 {
		t.Fatalf("refusals counted as too_slow: %v, want 1", got)
	}
}

// largeInvalidBody is a 10 MiB body of events of an unknown kind, each
// under the 1 MiB limit: read whole, decoded, refused with 400.
func largeInvalidBody() []byte {
	event := `{"event_type":"no_such_kind.v0","object":{"pad":"` + strings.Repeat("x", 900<<10) + `"}}`
	var b bytes.Buffer
	b.WriteByte('[')
	for b.Len()+len(event)+2 < 10<<20 {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(event)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// TestFrontDoorBoundsBytesOfLargeBodies: 64 concurrent 10 MiB bodies of
// account B hold at most the budget of bytes in flight (40 MiB here); those
// beyond B's share get 429 with Retry-After; the heap stays bounded; and A's
// POSTs get 202 within a second all along.
func TestFrontDoorBoundsBytesOfLargeBodies(t *testing.T) {
	const budget = 40 << 20
	fd := newFrontDoorEnv(t, api.Config{DoorConfig: apiconv.DoorConfig{MaxBytesInFlight: budget}})
	body := largeInvalidBody()
	baseline := heapBytes()

	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	var peakHeap, peakGauge atomic.Uint64
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for ctx.Err() == nil {
			peakHeap.Store(max(peakHeap.Load(), heapBytes()))
			peakGauge.Store(max(peakGauge.Load(), uint64(gaugeValue(t, fd, "sluice_ingest_body_bytes_in_flight"))))
			time.Sleep(5 * time.Millisecond)
		}
	}()
	b := startAttack(ctx, fd, 64, func() io.Reader { return bytes.NewReader(body) })
	lat := ingestAsA(t, fd, 3*time.Second)
	b.wg.Wait()
	stop()
	<-sampled
	t.Logf("A's ingest during B's 64 bodies of 10 MiB: %s; heap %d MiB before, peak %d MiB; peak body bytes in flight %d MiB", lat, baseline>>20, peakHeap.Load()>>20, peakGauge.Load()>>20)

	refused := 0
	for _, a := range b.answered() {
		switch {
		case a.err != nil:
			// Refused while still sending: the server closes the
			// connection without reading the rest, and the client may see
			// the reset before the answer.
		case a.status == http.StatusBadRequest:
		case a.status == http.StatusTooManyRequests && a.code == "ERR_SLUICE_131" && a.retryAfter != "":
			refused++
		default:
			t.Fatalf("B's large body: %+v, want 400 (invalid events) or 429 ERR_SLUICE_131 with Retry-After", a)
		}
	}
	if refused == 0 {
		t.Fatal("none of B's 64 bodies of 10 MiB was refused for its account's share of bytes")
	}
	if peakGauge.Load() > budget {
		t.Fatalf("body bytes in flight peaked at %d, over the budget of %d", peakGauge.Load(), budget)
	}
	// Each body byte in flight costs a few more in the heap while it is
	// decoded (see docs/operations.md): 4 budgets is ample, and far below
	// the 640 MiB of 64 bodies held at once.
	if limit := baseline + 4*budget; peakHeap.Load() > limit {
		t.Fatalf("heap peaked at %d MiB, over %d MiB (baseline %d MiB and 4 budgets of bytes in flight)", peakHeap.Load()>>20, limit>>20, baseline>>20)
	}
}

// heapBytes is the heap's live and unswept objects now, read without
// stopping the world.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// gaugeValue returns the value of the gauge name, 0 when there is none.
func gaugeValue(t *testing.T, fd *frontDoorEnv, name string) float64 {
	families, err := fd.reg.Gather()
	if err != nil {
		t.Error(err)
		return 0
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) > 0 {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return 0
}

// TestFrontDoorAccountOverShareIsDocumented: the 429 of an account at its
// share of requests matches docs/openapi.yaml, and another account is
// still served.
func TestFrontDoorAccountOverShareIsDocumented(t *testing.T) {
	fd := newFrontDoorEnv(t, api.Config{DoorConfig: apiconv.DoorConfig{MaxInFlight: 4, MaxAccountInFlight: 1}})
	ctx, stop := context.WithCancel(t.Context())
	b := startAttack(ctx, fd, 1, func() io.Reader { return trickle(ctx, time.Second) })
	t.Cleanup(func() { stop(); b.wg.Wait() })
	check.Eventually(t, 30*time.Second, "B's first request in flight", func() (float64, bool) {
		inFlight := gaugeValue(t, fd, "sluice_ingest_requests_in_flight")
		return inFlight, inFlight == 1
	})

	resp, out := fd.do(t, http.MethodPost, "/events", fd.tokenB, bytes.NewReader(apitest.MustJSON(t, apitest.Samples(t, 1, 1))), func(r *http.Request) {
		r.Header.Set("Content-Type", "application/json")
	})
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" || apitest.DecodeError(t, out).ErrorCode != "ERR_SLUICE_130" {
		t.Fatalf("B's second request: %d Retry-After %q: %s, want 429 ERR_SLUICE_130 with Retry-After: 1", resp.StatusCode, resp.Header.Get("Retry-After"), out)
	}
	if resp, out := fd.post(t, apitest.MustJSON(t, apitest.Samples(t, 2, 1)), nil); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("A's request: %d %s, want 202", resp.StatusCode, out)
	}
}

// TestFrontDoorUnauthenticatedBodyIsNotRead: a request without a valid key
// gets its 401 at once, its body left unread and its connection closed,
// however slowly the body comes: it holds no bytes and no slot.
func TestFrontDoorUnauthenticatedBodyIsNotRead(t *testing.T) {
	fd := newFrontDoorEnv(t, api.Config{})
	ctx, stop := context.WithTimeout(t.Context(), 10*time.Second)
	defer stop()
	start := time.Now()
	got := send(ctx, fd.url, "sk_not_a_key_of_anyone_here", trickle(ctx, time.Second))
	if got.status != http.StatusUnauthorized || got.code != "ERR_SLUICE_211" {
		t.Fatalf("slow body with an unknown key: %+v, want 401 ERR_SLUICE_211 at once", got)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("401 after %s, want it at once", took)
	}
	if n := gaugeValue(t, fd, "sluice_ingest_body_bytes_in_flight"); n != 0 {
		t.Fatalf("%v body bytes in flight after an unauthenticated request", n)
	}
}
