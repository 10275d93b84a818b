package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/client"
	"github.com/sluicehq/sluice/internal/check"
)

// refusingAPI answers the first refusals requests with 429 and the
// Retry-After header retryAfter ("" for none), then with {"id":"ak_1"};
// it records the body of every request.
type refusingAPI struct {
	mu     sync.Mutex
	bodies []string
}

func newRefusingAPI(t *testing.T, refusals int, retryAfter string) (*refusingAPI, string) {
	t.Helper()
	a := &refusingAPI{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		a.bodies = append(a.bodies, string(body))
		n := len(a.bodies)
		a.mu.Unlock()
		if n <= refusals {
			if retryAfter != "" {
				w.Header().Set("Retry-After", retryAfter)
			}
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"error_code":"ERR_SLUICE_139","status_code":429,"msg":"the account is changing its configuration faster than sluice allows","details":{"operation_id":"op_1"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"id":"ak_1"}`))
	}))
	t.Cleanup(srv.Close)
	return a, srv.URL
}

func (a *refusingAPI) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.bodies)
}

// TestRateLimitRetry checks that a 429 is sent again after the wait its
// Retry-After asks, in seconds or as a date, capped, or after a doubling
// wait without one; that the caller hears of each wait; and that the
// retries stop at the attempts allowed with the API's error.
func TestRateLimitRetry(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		refusals   int
		retryAfter string
		retry      client.RateLimitRetry
		wantWaits  []time.Duration
		wantErr    string // "" for success
	}{
		{name: "seconds", refusals: 2, retryAfter: "2", retry: client.RateLimitRetry{Attempts: 5},
			wantWaits: []time.Duration{2 * time.Second, 2 * time.Second}},
		{name: "HTTP date", refusals: 1, retryAfter: now.Add(7 * time.Second).Format(http.TimeFormat), retry: client.RateLimitRetry{Attempts: 5},
			wantWaits: []time.Duration{7 * time.Second}},
		{name: "HTTP date past", refusals: 1, retryAfter: now.Add(-time.Minute).Format(http.TimeFormat), retry: client.RateLimitRetry{Attempts: 5},
			wantWaits: []time.Duration{0}},
		{name: "capped", refusals: 1, retryAfter: "3600", retry: client.RateLimitRetry{Attempts: 5, MaxWait: 10 * time.Second},
			wantWaits: []time.Duration{10 * time.Second}},
		{name: "capped by default", refusals: 1, retryAfter: "3600", retry: client.RateLimitRetry{Attempts: 5},
			wantWaits: []time.Duration{client.DefaultMaxRateLimitWait}},
		{name: "no Retry-After", refusals: 3, retry: client.RateLimitRetry{Attempts: 5},
			wantWaits: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}},
		{name: "Retry-After not a wait", refusals: 1, retryAfter: "soon", retry: client.RateLimitRetry{Attempts: 5},
			wantWaits: []time.Duration{time.Second}},
		{name: "gives up", refusals: 10, retryAfter: "1", retry: client.RateLimitRetry{Attempts: 3},
			wantWaits: []time.Duration{time.Second, time.Second},
			wantErr:   "still rate limited after 3 attempts: ERR_SLUICE_139 (429): the account is changing"},
		{name: "no retry", refusals: 1, retryAfter: "1",
			wantErr: "ERR_SLUICE_139 (429)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api, url := newRefusingAPI(t, tt.refusals, tt.retryAfter)
			var slept, told []time.Duration
			var attempts []int
			sleep := func(_ context.Context, d time.Duration) error {
				slept = append(slept, d)
				return nil
			}
			tt.retry.Waiting = func(attempt int, wait time.Duration, refusal *client.Error) {
				if refusal.Code != "ERR_SLUICE_139" {
					t.Errorf("told of the refusal %v", refusal)
				}
				attempts = append(attempts, attempt)
				told = append(told, wait)
			}
			opts := []client.Option{client.WithClock(sleep, func() time.Time { return now })}
			if tt.retry.Attempts > 0 {
				opts = append(opts, client.WithRateLimitRetry(tt.retry))
			}
			c := client.New(url, "k", opts...)
			var out struct{ ID string }
			err := c.Do(t.Context(), http.MethodPost, "/api_keys", map[string]string{"description": "d"}, &out)

			if tt.wantErr == "" && (err != nil || out.ID != "ak_1") {
				t.Fatalf("error %v, answer %+v; want ak_1", err, out)
			}
			if tt.wantErr != "" {
				check.ErrorContains(t, err, tt.wantErr)
				var refusal *client.Error
				if !errors.As(err, &refusal) || refusal.Status != http.StatusTooManyRequests {
					t.Errorf("error %v is not the API's 429", err)
				}
			}
			if !slices.Equal(slept, tt.wantWaits) || !slices.Equal(told, tt.wantWaits) {
				t.Errorf("waited %v, told of %v; want %v", slept, told, tt.wantWaits)
			}
			for i, a := range attempts {
				if a != i+1 {
					t.Errorf("told of attempts %v, want 1, 2, ...", attempts)
					break
				}
			}
			requests := api.requests()
			if len(requests) != len(tt.wantWaits)+1 {
				t.Errorf("%d requests, want %d", len(requests), len(tt.wantWaits)+1)
			}
			for _, body := range requests {
				if body != `{"description":"d"}` {
					t.Errorf("a request's body %q, want the call's each time", body)
				}
			}
		})
	}
}

// TestRateLimitRetryOnlyAfter429 checks that other refusals are not sent
// again: they may have acted, or will refuse again.
func TestRateLimitRetryOnlyAfter429(t *testing.T) {
	var requests int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		w.Header().Set("Retry-After", "1")
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	sleep := func(context.Context, time.Duration) error {
		t.Error("waited to retry a 503")
		return nil
	}
	c := client.New(srv.URL, "k", client.WithRateLimitRetry(client.RateLimitRetry{Attempts: 5}), client.WithClock(sleep, time.Now))
	err := c.Do(t.Context(), http.MethodGet, "/api_keys", nil, nil)
	check.ErrorContains(t, err, "HTTP 503")
	if requests != 1 {
		t.Errorf("%d requests, want 1", requests)
	}
}

// TestRateLimitRetryEndsWithContext checks that a wait for Retry-After
// ends when the call's context does, with its cause, and sends nothing
// more.
func TestRateLimitRetryEndsWithContext(t *testing.T) {
	api, url := newRefusingAPI(t, 10, "30")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	retry := client.RateLimitRetry{Attempts: 5, Waiting: func(int, time.Duration, *client.Error) { cancel() }}
	start := time.Now()
	err := client.New(url, "k", client.WithRateLimitRetry(retry)).Do(ctx, http.MethodGet, "/api_keys", nil, nil)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "waiting 30s to retry after a 429") {
		t.Fatalf("error %v, want context.Canceled while waiting", err)
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("returned after %s, not when the context ended", elapsed)
	}
	if n := len(api.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}
