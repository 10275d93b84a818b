package api_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/trafficpolicy"
)

// sendAuthorization sends method path with Service-Version and the given
// Authorization lines (none for nil), and returns the status and body.
func sendAuthorization(t *testing.T, url, method, path string, authorization []string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Service-Version", "2")
	if authorization != nil {
		req.Header["Authorization"] = authorization
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// TestAuthorizationForms checks the one form of Authorization: exactly one
// header, Bearer in any case, one space and the key. Any other is 400
// ERR_SLUICE_212, on every path, saying the form and never quoting the
// header; no header is 401 ERR_SLUICE_210 where a key is needed, an
// unknown key 401 ERR_SLUICE_211.
func TestAuthorizationForms(t *testing.T) {
	st := apitest.Start(t)
	tok := st.Token
	ok := [][]string{
		{"Bearer " + tok}, {"bearer " + tok}, {"BEARER " + tok}, {"bEaReR " + tok},
		{"Bearer " + tok + " "}, {" Bearer " + tok}, // spaces around the value are not part of it (RFC 9110 5.5)
	}
	malformed := [][]string{
		{"Bearer  " + tok}, {"Bearer   " + tok}, {"Bearer\t" + tok}, {"Bearer \t" + tok}, {"Bearer" + tok},
		{"Bearer " + tok, "Bearer " + tok}, {"Bearer " + tok, ""}, {"", "Bearer " + tok}, {"Bearer " + tok, "Basic x"},
		{""}, {"Bearer"}, {"Bearer "}, {tok}, {"Basic " + tok}, {"Token " + tok}, {"Bearer: " + tok},
		{"Bearer " + tok + " x"}, {"Bearer " + tok + " " + tok}, {"Bearer " + tok + "  " + tok}, {"Bearer " + tok + ",Bearer " + tok},
		{"Bearer " + tok + ", Bearer " + tok}, {"Bearer " + tok + "\té"}, {"Bearer " + tok + "é"},
		{"Bearer " + strings.Repeat("k", 257)},
	}
	paths := []struct{ method, path string }{{"GET", "/event_destinations"}, {"POST", "/events"}, {"GET", "/no_such_path"}}
	for i, lines := range ok {
		if code, body := sendAuthorization(t, st.URL, "GET", "/event_destinations", lines); code != http.StatusOK {
			t.Errorf("ok form %d %q: %d %s", i, lines, code, body)
		}
	}
	for i, lines := range malformed {
		for _, p := range paths {
			code, body := sendAuthorization(t, st.URL, p.method, p.path, lines)
			if code != http.StatusBadRequest || !strings.Contains(body, `"ERR_SLUICE_212"`) || !strings.Contains(body, "Authorization: Bearer <API key>") {
				t.Errorf("malformed form %d %q, %s %s: %d %s; want 400 ERR_SLUICE_212 saying the form", i, lines, p.method, p.path, code, body)
			}
			if strings.Contains(body, tok) || strings.Contains(body, "kkkk") {
				t.Errorf("malformed form %d: the answer quotes the key: %s", i, body)
			}
		}
	}
	if code, body := sendAuthorization(t, st.URL, "GET", "/event_destinations", nil); code != http.StatusUnauthorized || !strings.Contains(body, `"ERR_SLUICE_210"`) {
		t.Errorf("no header: %d %s", code, body)
	}
	if code, body := sendAuthorization(t, st.URL, "GET", "/event_destinations", []string{"Bearer sk_" + strings.Repeat("0", 43)}); code != http.StatusUnauthorized || !strings.Contains(body, `"ERR_SLUICE_211"`) {
		t.Errorf("unknown key: %d %s", code, body)
	}
	if strings.Contains(st.Logs.String(), tok) {
		t.Errorf("the log holds the key")
	}
}

// TestPolicyLimitsAKeyWhateverItsSpelling runs the traffic policy of the
// API with a limit of 1,200 requests a minute per key, as the ready
// policy of docs/operations.md does, and sends 1,300 requests with one
// key in spellings that authentication takes (Bearer in any case),
// interleaved with spellings it does not (two spaces or a tab after
// Bearer, the header twice), which before issue 23 each had a bucket of
// their own: the 1,300 are limited as 1,300 identical requests are, 1,200
// admitted and 100 answered 429, and the others are 400 before the policy
// counts them. It checks a bucket of the header, getReqHeader
// ('Authorization'), and of the key's id, api_key.id.
func TestPolicyLimitsAKeyWhateverItsSpelling(t *testing.T) {
	for _, bucketKey := range []string{`"getReqHeader('Authorization')"`, `api_key.id`} {
		t.Run(bucketKey, func(t *testing.T) {
			p, err := trafficpolicy.Parse([]byte(`on_http_request:
  - actions:
      - type: rate-limit
        config: {name: per key, algorithm: sliding_window, capacity: 1200, rate: 300s, bucket_key: [`+bucketKey+`]}
`), trafficpolicy.WithAPIKey(apiconv.KeyID))
			if err != nil {
				t.Fatal(err)
			}
			st := apitest.Start(t, apitest.WithConfig(api.Config{Front: p.Handler}))
			taken := []string{"Bearer ", "bearer ", "BEARER ", "BeArEr "}
			refused := [][]string{{"Bearer  " + st.Token}, {"Bearer\t" + st.Token}, {"bearer " + st.Token, "Bearer " + st.Token}, {"Bearer   " + st.Token}}
			counts := map[int]int{}
			for i := range 1300 {
				code, body := sendAuthorization(t, st.URL, "GET", "/no_such_path", []string{taken[i%len(taken)] + st.Token})
				counts[code]++
				if code != http.StatusNotFound && code != http.StatusTooManyRequests {
					t.Fatalf("request %d: %d %s", i, code, body)
				}
				if i%3 == 0 {
					lines := refused[i%len(refused)]
					if code, body := sendAuthorization(t, st.URL, "GET", "/no_such_path", lines); code != http.StatusBadRequest {
						t.Fatalf("request %d, %q: %d %s, want 400", i, lines, code, body)
					}
				}
			}
			if counts[http.StatusNotFound] != 1200 || counts[http.StatusTooManyRequests] != 100 {
				t.Fatalf("1,300 requests of one key: %d admitted, %d limited; want 1200 and 100, as 1,300 identical requests", counts[http.StatusNotFound], counts[http.StatusTooManyRequests])
			}
		})
	}
}

// lookupCounter counts the lookups of API keys.
type lookupCounter struct {
	apiconv.Keys
	lookups *atomic.Int64
}

func (k lookupCounter) Authenticate(ctx context.Context, token string) (store.APIKey, error) {
	k.lookups.Add(1)
	return k.Keys.Authenticate(ctx, token)
}

// TestPolicyAPIKeyIsLookedUpOnce checks that the traffic policy's
// api_key.id and the key's check share one lookup of the key: a request of
// a known key, counted in the bucket of its id, is served; one of an
// unknown key has no api_key.id and gets 401 ERR_SLUICE_211; one without a
// key is looked up by neither.
func TestPolicyAPIKeyIsLookedUpOnce(t *testing.T) {
	p, err := trafficpolicy.Parse([]byte(`on_http_request:
  - actions:
      - type: rate-limit
        config: {name: per key, algorithm: sliding_window, capacity: 100, rate: 60s, bucket_key: [api_key.id]}
  - expressions: ["api_key.id == ''"]
    actions:
      - type: log
        config: {metadata: {no_key: "true"}}
`), trafficpolicy.WithAPIKey(apiconv.KeyID))
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	front := func(next http.Handler) http.Handler {
		return p.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id, ok := apiconv.KeyID(r)
			seen = append(seen, id+" "+strconv.FormatBool(ok))
			next.ServeHTTP(w, r)
		}))
	}
	var lookups atomic.Int64
	st := apitest.Start(t, apitest.WithConfig(api.Config{Front: front}), apitest.WithDeps(func(deps *api.Deps, _ jetstream.JetStream) {
		deps.Keys = lookupCounter{deps.Keys, &lookups}
	}))
	for _, tc := range []struct {
		name          string
		authorization []string
		code          int
		seen          string
		lookups       int64
	}{
		{"known key", []string{"bearer " + st.Token}, http.StatusOK, st.KeyID + " true", 1},
		{"unknown key", []string{"Bearer sk_" + strings.Repeat("0", 43)}, http.StatusUnauthorized, " false", 1},
		{"no key", nil, http.StatusUnauthorized, " false", 0},
	} {
		seen = nil
		before := lookups.Load()
		code, body := sendAuthorization(t, st.URL, "GET", "/event_destinations", tc.authorization)
		if code != tc.code || len(seen) != 1 || seen[0] != tc.seen || lookups.Load()-before != tc.lookups {
			t.Errorf("%s: %d %s, KeyID %q, %d lookups; want %d, %q, %d", tc.name, code, body, seen, lookups.Load()-before, tc.code, tc.seen, tc.lookups)
		}
	}
}
