package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/openapitest"
)

// exchange is a management request sent with a plain client and what it
// got back.
type exchange struct {
	req  *http.Request
	resp *http.Response
	body []byte
	err  error
}

// answer is the exchange's status, Retry-After and error code.
func (x exchange) answer() answer {
	if x.err != nil {
		return answer{err: x.err}
	}
	var e struct {
		ErrorCode string `json:"error_code"`
	}
	_ = json.Unmarshal(x.body, &e)
	return answer{status: x.resp.StatusCode, retryAfter: x.resp.Header.Get("Retry-After"), code: e.ErrorCode}
}

// sendManagement sends body (of contentLength bytes, -1: chunked) as token
// to method and path with a plain client: a slow body cannot go through
// the documented client, which buffers it first. It does not use t.
func sendManagement(ctx context.Context, url, token, method, path string, body io.Reader, contentLength int64) exchange {
	req, err := http.NewRequestWithContext(ctx, method, url+path, body)
	if err != nil {
		return exchange{err: err}
	}
	req.ContentLength = contentLength
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Service-Version", "2")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return exchange{req: req, err: err}
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return exchange{req: req, resp: resp, body: out, err: err}
}

// slowManagement sends n slow management bodies of B at once, each from
// body, until ctx ends; wait waits for them all.
func slowManagement(ctx context.Context, fd *frontDoorEnv, n int, method, path string, body func() io.Reader, contentLength int64) (wait func()) {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sendManagement(ctx, fd.url, fd.tokenB, method, path, body(), contentLength)
		}()
	}
	return wg.Wait
}

// waitForNoBytesInFlight waits until every grant of body bytes is given
// back.
func waitForNoBytesInFlight(t *testing.T, fd *frontDoorEnv) {
	t.Helper()
	check.Eventually(t, 10*time.Second, "body bytes in flight back to 0", func() (float64, bool) {
		inFlight := gaugeValue(t, fd, "sluice_ingest_body_bytes_in_flight")
		return inFlight, inFlight == 0
	})
}

// TestFrontDoorManagementShare: account B, holding its share of slow
// management bodies (8 by default), gets 429 ERR_SLUICE_130 with
// Retry-After for the next one and for every read (GET or HEAD, a list
// filtered or not), while account A's management calls still
// succeed promptly; once B's bodies are gone, their bytes and slots are
// given back.
func TestFrontDoorManagementShare(t *testing.T) {
	// B's bodies, a byte every 200 ms, are above a minimum of a byte a
	// second: they are held, not cut.
	fd := newFrontDoorEnv(t, api.Config{DoorConfig: apiconv.DoorConfig{MinBodyRate: 1}})
	share := apiconv.DefaultMaxAccountManagementInFlight
	ctx, stop := context.WithCancel(t.Context())
	wait := slowManagement(ctx, fd, share, http.MethodPost, "/event_destinations", func() io.Reader { return trickle(ctx, 200*time.Millisecond) }, -1)
	t.Cleanup(func() { stop(); wait() })
	// A chunked body is granted 64 KiB when it is admitted.
	check.Eventually(t, 20*time.Second, "B's slow management bodies admitted, their bytes in flight", func() (string, bool) {
		authenticated, inFlight := fd.authB.Load(), gaugeValue(t, fd, "sluice_ingest_body_bytes_in_flight")
		return fmt.Sprintf("%d authenticated, %v bytes in flight", authenticated, inFlight), authenticated == int64(share) && inFlight == float64(share*64<<10)
	})

	resp, out := fd.do(t, http.MethodPost, "/event_destinations", fd.tokenB, strings.NewReader(credsBody), func(r *http.Request) {
		r.Header.Set("Content-Type", "application/json")
	})
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" || apitest.DecodeError(t, out).ErrorCode != "ERR_SLUICE_130" {
		t.Fatalf("B's management request beyond its share: %d Retry-After %q: %s, want 429 ERR_SLUICE_130 with Retry-After: 1", resp.StatusCode, resp.Header.Get("Retry-After"), out)
	}
	if got := apitest.CounterValue(t, fd.reg, "sluice_ingest_refused_requests_total", "reason", "account_management"); got != 1 {
		t.Fatalf("refusals counted for account_management: %v, want 1", got)
	}
	// Every read takes a slot of the share: a list, filtered or not, a
	// single resource, and HEAD, which the GET handlers serve.
	for _, read := range []struct{ method, path string }{
		{http.MethodGet, "/event_destinations?filter=true"},
		{http.MethodGet, "/event_destinations"},
		{http.MethodGet, "/api_keys"},
		{http.MethodGet, "/event_destinations/ed_2Yq7aVWoPZ8Yb8JgR5bW1D7Xv4T"},
		{http.MethodHead, "/event_destinations?filter=true"},
		{http.MethodHead, "/event_destinations"},
	} {
		resp, out = fd.call(t, fd.tokenB, read.method, read.path, "")
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" {
			t.Fatalf("B's %s %s beyond its share: %d Retry-After %q %s, want 429 with Retry-After: 1", read.method, read.path, resp.StatusCode, resp.Header.Get("Retry-After"), out)
		}
		if read.method == http.MethodGet && apitest.DecodeError(t, out).ErrorCode != "ERR_SLUICE_130" {
			t.Fatalf("B's %s %s beyond its share: %s, want ERR_SLUICE_130", read.method, read.path, out)
		}
	}

	start := time.Now()
	created := fd.create(t, credsBody)
	resp, out = fd.call(t, fd.token, http.MethodPatch, "/event_destinations/"+created.ID, `{"description":"still served"}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if took := time.Since(start); took > latencyBound {
		t.Fatalf("A's create and update took %s while B held its share, want within %s", took, time.Duration(latencyBound))
	}

	stop()
	wait()
	waitForNoBytesInFlight(t, fd)
	resp, out = fd.call(t, fd.tokenB, http.MethodPost, "/event_destinations", credsBody)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
}

// TestFrontDoorManagementCutsSlowBodies: a management body that brings
// less than the minimum in a window is cut with the documented 408
// ERR_SLUICE_132, and its bytes are given back.
func TestFrontDoorManagementCutsSlowBodies(t *testing.T) {
	const window = 300 * time.Millisecond
	fd := newFrontDoorEnv(t, api.Config{DoorConfig: apiconv.DoorConfig{MinBodyRate: 1000, BodyRateWindow: window}})
	created := fd.create(t, credsBody)

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	start := time.Now()
	x := sendManagement(ctx, fd.url, fd.token, http.MethodPatch, "/event_destinations/"+created.ID, trickle(ctx, 100*time.Millisecond), -1)
	took := time.Since(start)
	if got := x.answer(); got.status != http.StatusRequestTimeout || got.code != "ERR_SLUICE_132" {
		t.Fatalf("slowloris management body: %+v, want 408 ERR_SLUICE_132", got)
	}
	if took > 5*window {
		t.Fatalf("slowloris management body cut after %s, want within about %s", took, window)
	}
	openapitest.Load(t, "../../docs/openapi.yaml").Check(t, x.req, nil, x.resp, x.body)
	if got := apitest.CounterValue(t, fd.reg, "sluice_ingest_refused_requests_total", "reason", "too_slow"); got != 1 {
		t.Fatalf("refusals counted as too_slow: %v, want 1", got)
	}
	waitForNoBytesInFlight(t, fd)
}

// TestFrontDoorManagementBodiesCountInAccountBytes: a management body of
// known length holds its length in the account's share of bytes from its
// admission, so that B's next body beyond the share gets 429
// ERR_SLUICE_131, while A's management calls are served; the bytes are
// given back once B's body is gone.
func TestFrontDoorManagementBodiesCountInAccountBytes(t *testing.T) {
	const bodyLimit = 1 << 20
	fd := newFrontDoorEnv(t, api.Config{DoorConfig: apiconv.DoorConfig{MaxBodyBytes: bodyLimit, MaxBytesInFlight: 8 << 20, MaxAccountBytesInFlight: 3 << 19, MinBodyRate: 1}})
	ctx, stop := context.WithCancel(t.Context())
	// Promises 1 MiB, sends a byte every 200 ms.
	wait := slowManagement(ctx, fd, 1, http.MethodPost, "/event_subscriptions", func() io.Reader { return trickle(ctx, 200*time.Millisecond) }, bodyLimit)
	t.Cleanup(func() { stop(); wait() })
	check.Eventually(t, 20*time.Second, "B's slow 1 MiB management body admitted, its bytes in flight", func() (float64, bool) {
		inFlight := gaugeValue(t, fd, "sluice_ingest_body_bytes_in_flight")
		return inFlight, inFlight == bodyLimit+1
	})

	// Promises 600 KiB, more than is left of B's share of 1.5 MiB, and is
	// refused on its headers, before it sends them.
	second, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	x := sendManagement(second, fd.url, fd.tokenB, http.MethodPost, "/event_destinations", trickle(second, time.Hour), 600<<10)
	if got := x.answer(); got.status != http.StatusTooManyRequests || got.code != "ERR_SLUICE_131" || got.retryAfter != "1" {
		t.Fatalf("B's second 1 MiB management body: %+v, want 429 ERR_SLUICE_131 with Retry-After: 1", got)
	}
	openapitest.Load(t, "../../docs/openapi.yaml").Check(t, x.req, nil, x.resp, x.body)
	fd.create(t, credsBody)

	stop()
	wait()
	waitForNoBytesInFlight(t, fd)
}

func TestFrontDoorAccountWriteRate(t *testing.T) {
	// B may make 3 changes at once, then one every 1000 s: the fourth is
	// refused, whatever the call, while B's reads and A's changes go on.
	fd := newFrontDoorEnv(t, api.Config{AccountWriteRate: 0.001, AccountWriteBurst: 3})
	create := func(token string) (*http.Response, []byte) {
		return fd.do(t, http.MethodPost, "/api_keys", token, strings.NewReader(`{"description":"rate"}`), func(r *http.Request) {
			r.Header.Set("Content-Type", "application/json")
		})
	}
	var made []string
	for i := range 3 {
		resp, body := create(fd.tokenB)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("B's change %d of its burst: %d %s", i+1, resp.StatusCode, body)
		}
		var key struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(body, &key); err != nil {
			t.Fatal(err)
		}
		made = append(made, key.ID)
	}
	resp, body := create(fd.tokenB)
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "ERR_SLUICE_139") || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("B's change past its rate: %d, Retry-After %q, %s; want 429 ERR_SLUICE_139 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	// A delete is a change too.
	resp, body = fd.do(t, http.MethodDelete, "/api_keys/"+made[0], fd.tokenB, nil, nil)
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("B's delete past its rate: %d %s; want 429", resp.StatusCode, body)
	}
	if resp, body := fd.do(t, http.MethodGet, "/api_keys", fd.tokenB, nil, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("B's read while past its rate of changes: %d %s; want 200", resp.StatusCode, body)
	}
	if resp, body := create(fd.token); resp.StatusCode != http.StatusCreated {
		t.Fatalf("A's change while B is past its rate: %d %s; want 201", resp.StatusCode, body)
	}
}
