package trafficpolicy

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"
)

// A policy limiting each API key to two POST /events a minute, with a JSON
// body on its 429s, in front of a handler. At 12:00:35 both admitted
// requests count in the slot of 12:00:30, which leaves the window of the
// requests from 12:01:30 on: 55 seconds later.
func ExampleParse() {
	policy, err := Parse([]byte(`
on_http_request:
  - name: ingest per key
    expressions: ["req.method == 'POST' && req.url.path == '/events'"]
    actions:
      - type: rate-limit
        config:
          name: per key
          algorithm: sliding_window
          capacity: 2
          rate: 60s
          bucket_key: ["getReqHeader('Authorization')"]
on_http_response:
  - expressions: ["actions.service.rate_limit.limited"]
    actions:
      - type: custom-response
        config: {status_code: 429, headers: {content-type: application/json}, body: '{"msg":"slow down"}'}
`), withClock(func() time.Time { return time.Date(2026, 11, 24, 12, 0, 35, 0, time.UTC) }))
	if err != nil {
		fmt.Println(err)
		return
	}
	h := policy.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusAccepted)
	}))
	for range 3 {
		r := httptest.NewRequest("POST", "/events", nil)
		r.Header.Set("Authorization", "Bearer sk_1")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusTooManyRequests {
			fmt.Println(w.Code)
			continue
		}
		body, _ := io.ReadAll(w.Body)
		fmt.Println(w.Code, "retry-after", w.Header().Get("Retry-After"), string(body))
	}
	// Output:
	// 202
	// 202
	// 429 retry-after 55 {"msg":"slow down"}
}

// A document with mistakes: each with its path, line and column.
func ExampleParse_mistakes() {
	_, err := Parse([]byte(`
on_http_request:
  - actions:
      - type: rate-limit
        config: {name: x, algorithm: sliding_window, capacity: 0, rate: 90s, bucket_key: [req.host]}
      - type: redirect
`))
	fmt.Println(err)
	// Output:
	// invalid traffic policy: line 5, column 64: on_http_request[0].actions[0].config.capacity: must be the most requests of a bucket admitted within rate: an integer from 1 to 2000000000, not 0
	//   line 6, column 15: on_http_request[0].actions[1].type: unknown action type "redirect": use one of basic-auth, compress-response, custom-response, deny, log, openid-connect, rate-limit, restrict-ips
}

// cookieLogins is the caller's logins of ExampleWithOpenIDConnect: a
// browser with the cookie "session" is Ann's; any other goes to log in.
type cookieLogins struct{}

func (cookieLogins) Authenticate(w http.ResponseWriter, r *http.Request, cfg *OpenIDConnect) (User, bool) {
	if _, err := r.Cookie("session"); err == nil {
		return User{ID: "248289761001", Name: "Ann", Email: "ann@example.com"}, true
	}
	http.Redirect(w, r, cfg.IssuerURL+"/authorize?client_id="+cfg.ClientID, http.StatusFound)
	return User{}, false
}

// An openid-connect whose logins the caller runs, and a rule after it
// that reads who logged in.
func ExampleWithOpenIDConnect() {
	policy, err := Parse([]byte(`
on_http_request:
  - actions:
      - type: openid-connect
        config: {issuer_url: "https://id.example.com", client_id: shop, client_secret: s3cret}
  - expressions: ["req.url.path == '/admin' && actions.service.oidc.user.email != 'bob@example.com'"]
    actions: [{type: deny}]
`), WithOpenIDConnect(cookieLogins{}))
	if err != nil {
		fmt.Println(err)
		return
	}
	h := policy.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	for _, path := range []string{"/", "/admin"} {
		for _, logged := range []bool{false, true} {
			r := httptest.NewRequest("GET", path, nil)
			if logged {
				r.AddCookie(&http.Cookie{Name: "session", Value: "1"})
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if loc := w.Header().Get("Location"); loc != "" {
				fmt.Println(path, logged, w.Code, "to", loc)
				continue
			}
			fmt.Println(path, logged, w.Code)
		}
	}
	// Output:
	// / false 302 to https://id.example.com/authorize?client_id=shop
	// / true 200
	// /admin false 302 to https://id.example.com/authorize?client_id=shop
	// /admin true 403
}
