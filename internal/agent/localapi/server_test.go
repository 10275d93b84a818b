package localapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/agent/agentconfig"
)

// fakeBackend is a Backend of tunnels held in memory. Its Replay, when
// set, serves the request; else it records it.
type fakeBackend struct {
	mu       sync.Mutex
	tunnels  []Tunnel
	notReady bool
	startErr error
	status   Status
	replayed []replayCall
	replay   func(ctx context.Context, tunnelName string, req *http.Request) error
}

type replayCall struct {
	tunnel string
	req    *http.Request
	body   []byte
}

func (b *fakeBackend) Tunnels() []Tunnel {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Tunnel(nil), b.tunnels...)
}

func (b *fakeBackend) StartTunnel(ctx context.Context, cfg agentconfig.Tunnel) (Tunnel, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.notReady {
		return Tunnel{}, ErrNotReady
	}
	if b.startErr != nil {
		return Tunnel{}, b.startErr
	}
	for _, t := range b.tunnels {
		if t.Name == cfg.Name {
			return Tunnel{}, fmt.Errorf("starting %s: %w", cfg.Name, ErrTunnelExists)
		}
	}
	t := Tunnel{Name: cfg.Name, PublicURL: "https://" + cfg.Name + ".example.test", Proto: "https", Config: cfg, Meter: NewMeter(nil)}
	b.tunnels = append(b.tunnels, t)
	return t, nil
}

func (b *fakeBackend) StopTunnel(ctx context.Context, name string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.notReady {
		return ErrNotReady
	}
	for i, t := range b.tunnels {
		if t.Name == name {
			b.tunnels = append(b.tunnels[:i], b.tunnels[i+1:]...)
			return nil
		}
	}
	return ErrNoTunnel
}

func (b *fakeBackend) Status() Status {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.status
}

func (b *fakeBackend) Replay(ctx context.Context, tunnelName string, req *http.Request) error {
	if b.replay != nil {
		return b.replay(ctx, tunnelName, req)
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, t := range b.tunnels {
		if t.Name == tunnelName {
			b.replayed = append(b.replayed, replayCall{tunnel: tunnelName, req: req, body: body})
			return nil
		}
	}
	return ErrNoTunnel
}

// decodeTestTunnel is the test's stand-in of agentconfig.DecodeTunnelJSON.
func decodeTestTunnel(data []byte) (agentconfig.Tunnel, error) {
	var in struct {
		Name  string `json:"name"`
		Proto string `json:"proto"`
		Addr  string `json:"addr"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return agentconfig.Tunnel{}, fmt.Errorf("decoding the tunnel: %w", err)
	}
	if in.Name == "" {
		return agentconfig.Tunnel{}, errors.New(`"name" is missing`)
	}
	return agentconfig.Tunnel{Name: in.Name, Proto: in.Proto, Addr: in.Addr, Inspect: true}, nil
}

type apiFixture struct {
	backend  *fakeBackend
	captures *Captures
	handler  http.Handler
}

func newAPIFixture(t *testing.T) *apiFixture {
	t.Helper()
	meter := NewMeter(nil)
	meter.ConnOpened()
	meter.HTTPDone(time.Millisecond)
	b := &fakeBackend{
		tunnels: []Tunnel{{
			Name: "web", ID: "tn_1", PublicURL: "https://web.example.test", Proto: "https",
			Config: agentconfig.Tunnel{Name: "web", Proto: "http", Addr: "http://localhost:8080", Inspect: true},
			Meter:  meter,
		}},
		status: Status{
			State: "online", Edge: "edge.example.test:443", Latency: 12500 * time.Microsecond,
			SessionID: "ts_1", ConnectedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		},
	}
	captures := NewCaptures(CapturesConfig{})
	srv := New(Config{
		Backend: b, Captures: captures, DecodeTunnel: decodeTestTunnel,
		AllowHosts: []string{"inspect.example.test"}, Version: "1.2.3",
		Logger: slog.New(slog.DiscardHandler),
	})
	return &apiFixture{backend: b, captures: captures, handler: srv.Handler()}
}

// call sends a request to the API as from localhost, and returns the
// answer and its body decoded as JSON (nil when not JSON).
func (f *apiFixture) call(t *testing.T, method, target, body string) (*httptest.ResponseRecorder, map[string]any) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	req.Host = "localhost:4040"
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	f.handler.ServeHTTP(rec, req)
	var decoded map[string]any
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(rec.Body.Bytes(), &decoded); err != nil {
			t.Fatalf("%s %s: answer %q is not JSON: %v", method, target, rec.Body, err)
		}
	}
	return rec, decoded
}

// wantError checks an error answer's status, code and details.err.
func wantError(t *testing.T, rec *httptest.ResponseRecorder, body map[string]any, status, code int, errPart string) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status %d, want %d: %s", rec.Code, status, rec.Body)
	}
	if body["error_code"] != float64(code) || body["status_code"] != float64(status) {
		t.Errorf("error_code/status_code %v/%v, want %d/%d", body["error_code"], body["status_code"], code, status)
	}
	if msg, _ := body["msg"].(string); msg == "" {
		t.Errorf("no msg in %s", rec.Body)
	}
	details, _ := body["details"].(map[string]any)
	if got, _ := details["err"].(string); !strings.Contains(got, errPart) {
		t.Errorf("details.err %q, want it to contain %q", got, errPart)
	}
}

func TestTunnelRoutes(t *testing.T) {
	t.Run("list", func(t *testing.T) {
		f := newAPIFixture(t)
		rec, body := f.call(t, "GET", "/api/tunnels", "")
		if rec.Code != 200 || body["uri"] != "/api/tunnels" {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		tunnels := body["tunnels"].([]any)
		if len(tunnels) != 1 {
			t.Fatalf("tunnels %v", tunnels)
		}
		tn := tunnels[0].(map[string]any)
		want := map[string]any{"name": "web", "ID": "tn_1", "uri": "/api/tunnels/web", "public_url": "https://web.example.test", "proto": "https"}
		for k, v := range want {
			if tn[k] != v {
				t.Errorf("%s = %v, want %v", k, tn[k], v)
			}
		}
		cfg := tn["config"].(map[string]any)
		if cfg["addr"] != "http://localhost:8080" || cfg["inspect"] != true {
			t.Errorf("config %v", cfg)
		}
		metrics := tn["metrics"].(map[string]any)
		if metrics["conns"].(map[string]any)["count"] != float64(1) || metrics["http"].(map[string]any)["count"] != float64(1) {
			t.Errorf("metrics %v", metrics)
		}
	})

	t.Run("list a labeled tunnel", func(t *testing.T) {
		f := newAPIFixture(t)
		f.backend.tunnels = []Tunnel{{
			Name: "routed", ID: "tn_2", Proto: "labeled",
			Config: agentconfig.Tunnel{Name: "routed", Proto: "labeled", Labels: map[string]string{"edge": "edghts_1"}, Addr: "http://localhost:8080", Inspect: true},
			Meter:  NewMeter(nil),
		}}
		rec, _ := f.call(t, "GET", "/api/tunnels", "")
		for _, want := range []string{`"ID":"tn_2"`, `"public_url":""`, `"proto":"labeled"`, `"labels":{"edge":"edghts_1"}`, `"addr":"http://localhost:8080"`} {
			if !strings.Contains(rec.Body.String(), want) {
				t.Errorf("%s lacks %s", rec.Body, want)
			}
		}
	})

	t.Run("list empty is an empty array", func(t *testing.T) {
		f := newAPIFixture(t)
		f.backend.tunnels = nil
		rec, _ := f.call(t, "GET", "/api/tunnels", "")
		if !strings.Contains(rec.Body.String(), `"tunnels":[]`) {
			t.Fatalf("%s", rec.Body)
		}
	})

	t.Run("get", func(t *testing.T) {
		f := newAPIFixture(t)
		rec, body := f.call(t, "GET", "/api/tunnels/web", "")
		if rec.Code != 200 || body["name"] != "web" {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		rec, body = f.call(t, "GET", "/api/tunnels/nope", "")
		wantError(t, rec, body, 404, CodeTunnelNotFound, ErrNoTunnel.Error())
	})

	t.Run("start", func(t *testing.T) {
		f := newAPIFixture(t)
		rec, body := f.call(t, "POST", "/api/tunnels", `{"name":"api","proto":"http","addr":"9000"}`)
		if rec.Code != 201 || body["name"] != "api" || body["uri"] != "/api/tunnels/api" || body["public_url"] != "https://api.example.test" {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		if len(f.backend.Tunnels()) != 2 {
			t.Fatal("not started")
		}
	})

	t.Run("start errors", func(t *testing.T) {
		for _, tc := range []struct {
			name      string
			body      string
			setup     func(*fakeBackend)
			status    int
			code      int
			detailErr string
		}{
			{"bad body", `{"name":`, nil, 400, CodeBadBody, "decoding the tunnel"},
			{"decoder refuses", `{"proto":"http"}`, nil, 400, CodeBadBody, `"name" is missing`},
			{"exists", `{"name":"web"}`, nil, 409, CodeTunnelExists, ErrTunnelExists.Error()},
			{"not ready", `{"name":"x"}`, func(b *fakeBackend) { b.notReady = true }, 502, CodeNotReady, "tunnel session not ready yet"},
			{"edge refuses", `{"name":"x"}`, func(b *fakeBackend) { b.startErr = &EdgeError{Msg: "domain taken"} }, 400, CodeEdgeRefused, "domain taken"},
			{"other", `{"name":"x"}`, func(b *fakeBackend) { b.startErr = errors.New("boom") }, 500, CodeInternal, "boom"},
			{"too large", `{"name":"` + strings.Repeat("x", maxBodyBytes) + `"}`, nil, 400, CodeBadBody, "too large"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				f := newAPIFixture(t)
				if tc.setup != nil {
					tc.setup(f.backend)
				}
				rec, body := f.call(t, "POST", "/api/tunnels", tc.body)
				wantError(t, rec, body, tc.status, tc.code, tc.detailErr)
			})
		}
	})

	t.Run("not ready is exactly what ngrok's clients retry on", func(t *testing.T) {
		f := newAPIFixture(t)
		f.backend.notReady = true
		rec, body := f.call(t, "DELETE", "/api/tunnels/web", "")
		if rec.Code != 502 || body["details"].(map[string]any)["err"] != "tunnel session not ready yet" {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
	})

	t.Run("stop", func(t *testing.T) {
		f := newAPIFixture(t)
		rec, _ := f.call(t, "DELETE", "/api/tunnels/web", "")
		if rec.Code != 204 || rec.Body.Len() != 0 {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		rec, body := f.call(t, "DELETE", "/api/tunnels/web", "")
		wantError(t, rec, body, 404, CodeTunnelNotFound, ErrNoTunnel.Error())
	})

	t.Run("status", func(t *testing.T) {
		f := newAPIFixture(t)
		rec, body := f.call(t, "GET", "/api/status", "")
		want := map[string]any{
			"state": "online", "agent_version": "1.2.3", "edge": "edge.example.test:443", "latency_ms": 12.5,
			"session_id": "ts_1", "connected_at": "2026-01-02T03:04:05.000Z", "last_error": "",
		}
		if rec.Code != 200 {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		for k, v := range want {
			if body[k] != v {
				t.Errorf("%s = %v, want %v", k, body[k], v)
			}
		}
		f.backend.status = Status{State: "offline", AgentVersion: "9.9.9", LastError: "dial: refused"}
		_, body = f.call(t, "GET", "/api/status", "")
		if body["connected_at"] != nil || body["agent_version"] != "9.9.9" || body["last_error"] != "dial: refused" {
			t.Errorf("offline status %v", body)
		}
	})
}

// captureOne sends a request through the fixture's captures as the
// tunnel "web", and returns its capture.
func (f *apiFixture) captureOne(t *testing.T, method, path, body string) *Capture {
	t.Helper()
	sub := f.captures.Subscribe()
	defer sub.Cancel()
	srv := httptest.NewServer(f.captures.Capturing("web", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"ok":true}`)
	})))
	defer srv.Close()
	req := mustRequest(t, method, srv.URL+path, strings.NewReader(body))
	req.Header.Set("X-Trace", "abc")
	do(t, req)
	return nextCapture(t, f.captures, sub)
}

func TestRequestRoutes(t *testing.T) {
	t.Run("list newest first, limit and tunnel", func(t *testing.T) {
		f := newAPIFixture(t)
		first := f.captureOne(t, "GET", "/one", "")
		second := f.captureOne(t, "POST", "/two", "hi")
		f.captures.add(testCapture("req_other", "other", 10))
		rec, body := f.call(t, "GET", "/api/requests/http", "")
		if rec.Code != 200 || body["uri"] != "/api/requests/http" {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		ids := func(body map[string]any) []string {
			var out []string
			for _, r := range body["requests"].([]any) {
				out = append(out, r.(map[string]any)["id"].(string))
			}
			return out
		}
		if got := ids(body); fmt.Sprint(got) != fmt.Sprint([]string{"req_other", second.ID, first.ID}) {
			t.Errorf("ids %v", got)
		}
		_, body = f.call(t, "GET", "/api/requests/http?limit=1&tunnel_name=web", "")
		if got := ids(body); fmt.Sprint(got) != fmt.Sprint([]string{second.ID}) {
			t.Errorf("limit 1 of web: %v", got)
		}
		_, body = f.call(t, "GET", "/api/requests/http?limit=5000", "")
		if got := ids(body); len(got) != 3 {
			t.Errorf("limit above the max: %v", got)
		}
		req := body["requests"].([]any)[1].(map[string]any)["request"].(map[string]any)
		if req["method"] != "POST" || req["uri"] != "/two" || req["raw"] == "" {
			t.Errorf("request %v", req)
		}
	})

	t.Run("bad limits", func(t *testing.T) {
		f := newAPIFixture(t)
		for _, limit := range []string{"x", "0", "-1", "1.5"} {
			rec, body := f.call(t, "GET", "/api/requests/http?limit="+limit, "")
			wantError(t, rec, body, 400, CodeBadQuery, "limit")
		}
	})

	t.Run("get", func(t *testing.T) {
		f := newAPIFixture(t)
		c := f.captureOne(t, "GET", "/one", "")
		rec, body := f.call(t, "GET", "/api/requests/http/"+c.ID, "")
		if rec.Code != 200 || body["id"] != c.ID || body["uri"] != c.URI || body["tunnel_name"] != "web" {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		res := body["response"].(map[string]any)
		if res["status"] != "200 OK" || res["status_code"] != float64(200) {
			t.Errorf("response %v", res)
		}
		rec, body = f.call(t, "GET", "/api/requests/http/req_nope", "")
		wantError(t, rec, body, 404, CodeRequestNotFound, "req_nope")
	})

	t.Run("replay rebuilds the captured request", func(t *testing.T) {
		for _, key := range []string{"tunnel_name", "tunnelName", ""} {
			t.Run(key, func(t *testing.T) {
				f := newAPIFixture(t)
				c := f.captureOne(t, "POST", "/things?x=1", `{"a":1}`)
				in := `{"id":"` + c.ID + `"}`
				if key != "" {
					in = `{"id":"` + c.ID + `","` + key + `":"web"}`
				}
				rec, _ := f.call(t, "POST", "/api/requests/http", in)
				if rec.Code != 204 {
					t.Fatalf("%d %s", rec.Code, rec.Body)
				}
				if len(f.backend.replayed) != 1 {
					t.Fatalf("replayed %d", len(f.backend.replayed))
				}
				got := f.backend.replayed[0]
				if got.tunnel != "web" || got.req.Method != "POST" || got.req.RequestURI != "/things?x=1" ||
					got.req.URL.Path != "/things" || got.req.Host == "" ||
					!strings.Contains(string(c.Request.Raw), "\r\nHost: "+got.req.Host+"\r\n") {
					t.Errorf("replayed %s %s to %s (host %q)", got.req.Method, got.req.RequestURI, got.tunnel, got.req.Host)
				}
				if c.Request.Headers.Get("Host") != got.req.Host {
					t.Errorf("host %q, captured %q", got.req.Host, c.Request.Headers.Get("Host"))
				}
				for name, values := range c.Request.Headers {
					if name == "Host" {
						continue // the request's Host
					}
					if fmt.Sprint(got.req.Header[name]) != fmt.Sprint(values) {
						t.Errorf("header %s = %v, want %v", name, got.req.Header[name], values)
					}
				}
				if got.req.Header.Get("X-Trace") != "abc" || string(got.body) != `{"a":1}` {
					t.Errorf("header X-Trace %q, body %q", got.req.Header.Get("X-Trace"), got.body)
				}
			})
		}
	})

	t.Run("replay errors", func(t *testing.T) {
		f := newAPIFixture(t)
		c := f.captureOne(t, "GET", "/one", "")
		truncated := testCapture("req_truncated", "web", 10)
		truncated.Request.Truncated = true
		f.captures.add(truncated)
		for _, tc := range []struct {
			name, body string
			status     int
			code       int
			detailErr  string
		}{
			{"no body", "", 400, CodeBadBody, "empty"},
			{"not JSON", `{"id":`, 400, CodeBadBody, "unexpected EOF"},
			{"wrong type", `{"id":5}`, 400, CodeBadBody, "cannot unmarshal number"},
			{"trailing data", `{"id":"x"} {}`, 400, CodeBadBody, "after the JSON value"},
			{"no id", `{}`, 400, CodeBadBody, `"id" is missing`},
			{"unknown id", `{"id":"req_nope"}`, 404, CodeRequestNotFound, "req_nope"},
			{"unknown tunnel", `{"id":"` + c.ID + `","tunnel_name":"nope"}`, 404, CodeTunnelNotFound, ErrNoTunnel.Error()},
			{"truncated", `{"id":"req_truncated"}`, 400, CodeNotReplayable, "part of its body"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rec, body := f.call(t, "POST", "/api/requests/http", tc.body)
				wantError(t, rec, body, tc.status, tc.code, tc.detailErr)
			})
		}
	})

	t.Run("clear", func(t *testing.T) {
		f := newAPIFixture(t)
		f.captureOne(t, "GET", "/one", "")
		rec, _ := f.call(t, "DELETE", "/api/requests/http", "")
		if rec.Code != 204 {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		_, body := f.call(t, "GET", "/api/requests/http", "")
		if n := len(body["requests"].([]any)); n != 0 {
			t.Fatalf("%d left", n)
		}
	})
}

func TestStream(t *testing.T) {
	f := newAPIFixture(t)
	srv := httptest.NewServer(f.handler)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/requests/http/stream", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	events := make(chan string, 10)
	go func() {
		defer close(events)
		var block strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := res.Body.Read(buf)
			block.Write(buf[:n])
			for {
				s := block.String()
				i := strings.Index(s, "\n\n")
				if i < 0 {
					break
				}
				if !strings.HasPrefix(s, ":") {
					events <- s[:i]
				}
				block.Reset()
				block.WriteString(s[i+2:])
			}
			if err != nil {
				return
			}
		}
	}()
	// The stream subscribes before it answers: what is added now is sent.
	c := testCapture("req_live", "web", 10)
	f.captures.add(c)
	f.captures.Clear()
	next := func() string {
		select {
		case ev := <-events:
			return ev
		case <-time.After(5 * time.Second):
			t.Fatal("no event within 5s")
			return ""
		}
	}
	ev := next()
	if !strings.HasPrefix(ev, "event: capture\ndata: {") || !strings.Contains(ev, `"id":"req_live"`) || strings.Contains(ev, `"raw"`) {
		t.Errorf("first event %q", ev)
	}
	if ev := next(); ev != "event: clear\ndata: {}" {
		t.Errorf("second event %q", ev)
	}
	cancel()
	for range events {
	}
}

func TestHostCheck(t *testing.T) {
	f := newAPIFixture(t)
	for _, tc := range []struct {
		host string
		ok   bool
	}{
		{"localhost", true},
		{"localhost:4040", true},
		{"LOCALHOST:4040", true},
		{"127.0.0.1:4040", true},
		{"127.0.0.2", true},
		{"[::1]:4040", true},
		{"[::1]", true},
		{"inspect.example.test", true},
		{"inspect.example.test:443", true},
		{"Inspect.Example.Test", true},
		{"evil.example.test", false},
		{"sub.inspect.example.test", false},
		{"localhost.evil.test", false},
		{"10.0.0.1:4040", false},
		{"0.0.0.0:4040", false},
		{"", false},
	} {
		t.Run(tc.host, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/api/status", nil)
			req.Host = tc.host
			rec := httptest.NewRecorder()
			f.handler.ServeHTTP(rec, req)
			if tc.ok && rec.Code != 200 {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			if !tc.ok {
				var body map[string]any
				_ = json.Unmarshal(rec.Body.Bytes(), &body)
				wantError(t, rec, body, 403, CodeHostNotAllowed, "web_allow_hosts")
			}
		})
	}
}

func TestCrossOrigin(t *testing.T) {
	f := newAPIFixture(t)
	for _, tc := range []struct {
		name, origin, fetchSite string
		ok                      bool
	}{
		{"same origin", "http://localhost:4040", "same-origin", true},
		{"no browser headers (curl)", "", "", true},
		{"another site", "https://evil.example.test", "cross-site", false},
		{"another origin without fetch metadata", "https://evil.example.test", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("DELETE", "/api/requests/http", nil)
			req.Host = "localhost:4040"
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.fetchSite != "" {
				req.Header.Set("Sec-Fetch-Site", tc.fetchSite)
			}
			rec := httptest.NewRecorder()
			f.handler.ServeHTTP(rec, req)
			if tc.ok && rec.Code != 204 {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			if !tc.ok {
				var body map[string]any
				_ = json.Unmarshal(rec.Body.Bytes(), &body)
				wantError(t, rec, body, 403, CodeCrossOrigin, "another origin")
			}
		})
	}
}

func TestMisses(t *testing.T) {
	f := newAPIFixture(t)
	for _, tc := range []struct {
		method, path string
		status, code int
		allow        string
	}{
		{"GET", "/nope", 404, CodeNotFound, ""},
		{"GET", "/api", 404, CodeNotFound, ""},
		{"GET", "/static/other.js", 404, CodeNotFound, ""},
		{"PUT", "/api/tunnels", 405, CodeMethodNotAllowed, "GET, HEAD, POST"},
		{"POST", "/api/tunnels/web", 405, CodeMethodNotAllowed, "DELETE, GET, HEAD"},
		{"PATCH", "/api/requests/http", 405, CodeMethodNotAllowed, "DELETE, GET, HEAD, POST"},
		{"DELETE", "/api/requests/http/stream", 405, CodeMethodNotAllowed, "GET, HEAD"},
		{"POST", "/api/status", 405, CodeMethodNotAllowed, "GET, HEAD"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			rec, body := f.call(t, tc.method, tc.path, "")
			wantError(t, rec, body, tc.status, tc.code, tc.path)
			if got := rec.Header().Get("Allow"); got != tc.allow {
				t.Errorf("Allow %q, want %q", got, tc.allow)
			}
		})
	}
}

func TestInspectorFiles(t *testing.T) {
	f := newAPIFixture(t)
	for _, tc := range []struct{ path, contentType, contains string }{
		{"/", "text/html", `<script src="/static/inspector.js"`},
		{"/inspect/http", "text/html", "sluice-agent"},
		{"/static/inspector.js", "text/javascript", "textContent"},
		{"/static/inspector.css", "text/css", ".row"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			rec, _ := f.call(t, "GET", tc.path, "")
			if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), tc.contentType) {
				t.Fatalf("%d %s", rec.Code, rec.Header().Get("Content-Type"))
			}
			if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
				t.Errorf("CSP %q", csp)
			}
			if !strings.Contains(rec.Body.String(), tc.contains) {
				t.Errorf("body lacks %q", tc.contains)
			}
		})
	}
	t.Run("no inline script or style", func(t *testing.T) {
		rec, _ := f.call(t, "GET", "/", "")
		page := rec.Body.String()
		if strings.Contains(page, "<script>") || strings.Contains(page, "<style") || strings.Contains(page, "style=") || strings.Contains(page, "onclick") {
			t.Fatal("the page has inline script or style, which its CSP refuses")
		}
	})
}
