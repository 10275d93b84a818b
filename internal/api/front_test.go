package api_test

import (
	"net/http"
	"testing"

	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/apitest"
)

// TestFrontRunsBeforeTheKey checks that Config.Front wraps the routes
// inside the operation id and before the key's check: its answer to a
// request without a key carries Service-Operation-Id, and what it lets
// through meets the key's check.
func TestFrontRunsBeforeTheKey(t *testing.T) {
	front := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/events" {
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	st := apitest.Start(t, apitest.WithConfig(api.Config{Front: front}))
	for path, want := range map[string]int{"/events": http.StatusTooManyRequests, "/event_destinations": http.StatusUnauthorized} {
		method := "GET"
		if path == "/events" {
			method = "POST"
		}
		req, err := http.NewRequest(method, st.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Service-Version", "2")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want || resp.Header.Get(apiconv.HeaderOperationID) == "" {
			t.Errorf("%s %s without a key: %d, %s %q; want %d with an operation id", method, path, resp.StatusCode, apiconv.HeaderOperationID, resp.Header.Get(apiconv.HeaderOperationID), want)
		}
	}
}
