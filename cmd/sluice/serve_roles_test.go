package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// inProcessServe is `sluice serve` running in the test process, with its
// own embedded NATS server.
type inProcessServe struct {
	url        string
	metricsURL string // of --metrics-http
	logs       *serveLog
	done       chan struct{} // closed when serve has returned, with err set
	err        error
}

// startServeInProcess runs `sluice serve` with the arguments on a free
// loopback port (and metrics on another) and a data dir of its own, and waits until it says where
// it serves. The test's cleanup stops it.
func startServeInProcess(t *testing.T, args ...string) *inProcessServe {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &inProcessServe{logs: &serveLog{served: make(chan string, 1)}, done: make(chan struct{})}
	cmd := newRootCommand()
	cmd.SetArgs(append([]string{"serve", "--http", "127.0.0.1:0", "--metrics-http", "127.0.0.1:0", "--log-format", "json", "--data-dir", t.TempDir()}, devEdgeArgs(args)...))
	cmd.SetOut(io.Discard)
	cmd.SetErr(p.logs)
	go func() {
		defer close(p.done)
		p.err = cmd.ExecuteContext(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-p.done:
			if p.err != nil {
				t.Errorf("sluice serve stopped with %v", p.err)
			}
		case <-time.After(30 * time.Second):
			t.Error("sluice serve did not stop within 30s")
		}
	})
	select {
	case p.url = <-p.logs.served:
		p.metricsURL = logAttrOf(t, p.logs.String(), "sluice is serving", "metrics")
	case <-p.done:
		t.Fatalf("sluice serve stopped before serving: %v\n%s", p.err, p.logs)
	case <-time.After(30 * time.Second):
		t.Fatalf("sluice serve did not start within 30s:\n%s", p.logs)
	}
	return p
}

// serveLog is the standard error of an in-process serve: it keeps what is
// written and sends the http attribute of the line "sluice is serving" on
// served.
type serveLog struct {
	served chan string // buffered, one value

	mu      sync.Mutex
	written bytes.Buffer
	partial []byte // the line being written
}

// Write keeps p and looks for the line that says where serve serves.
func (l *serveLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.written.Write(p)
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		var rec struct {
			Msg  string `json:"msg"`
			HTTP string `json:"http"`
		}
		if json.Unmarshal(l.partial[:i], &rec) == nil && rec.Msg == "sluice is serving" {
			select {
			case l.served <- rec.HTTP:
			default:
			}
		}
		l.partial = l.partial[i+1:]
	}
}

// String returns everything written.
func (l *serveLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.written.String()
}

// TestServeRoles runs one process per role: each serves its role's routes,
// answers 404 on the others, and serves health and readiness on both its
// listeners, metrics on --metrics-http only.
func TestServeRoles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sluice serve")
	}
	const token = "sk_test_roles_token_0123456789"
	events := `[{"event_type":"http_request_complete.v0","object":{"conn":{"server_port":443}}}]`
	tests := []struct {
		roles                               string
		wantIngest, wantManagement, wantAPI int
	}{
		{roles: "api", wantIngest: http.StatusNotFound, wantManagement: http.StatusOK, wantAPI: http.StatusOK},
		{roles: "ingest", wantIngest: http.StatusAccepted, wantManagement: http.StatusNotFound, wantAPI: http.StatusNotFound},
		{roles: "worker", wantIngest: http.StatusNotFound, wantManagement: http.StatusNotFound, wantAPI: http.StatusNotFound},
		{roles: "api,ingest,worker", wantIngest: http.StatusAccepted, wantManagement: http.StatusOK, wantAPI: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.roles, func(t *testing.T) {
			clearSluiceEnv(t)
			t.Setenv(bootstrapKeyEnv, token)
			t.Setenv("SLUICE_ROLES", tt.roles) // as a container would set it
			p := startServeInProcess(t)
			if got := logAttrOf(t, p.logs.String(), "sluice is serving", "roles"); got != tt.roles {
				t.Errorf("logged roles %q, want %q", got, tt.roles)
			}
			waitReady(t, p.url)
			for _, get := range []struct{ url, path string }{
				{p.url, healthzPath}, {p.url, readyzPath},
				{p.metricsURL, healthzPath}, {p.metricsURL, readyzPath}, {p.metricsURL, metricsPath},
			} {
				if code, body := request(t, http.MethodGet, get.url+get.path, "", ""); code != http.StatusOK {
					t.Errorf("GET %s%s: %d %s", get.url, get.path, code, body)
				}
			}
			if code, body := request(t, http.MethodGet, p.url+metricsPath, "", ""); code != http.StatusNotFound {
				t.Errorf("GET %s on --http: %d %.200s, want 404: metrics are on --metrics-http only", metricsPath, code, body)
			}
			if code, body := request(t, http.MethodPost, p.url+"/events", token, events); code != tt.wantIngest {
				t.Errorf("POST /events: %d %s, want %d", code, body, tt.wantIngest)
			}
			for _, path := range []string{"/event_destinations", "/event_subscriptions", "/api_keys"} {
				if code, body := request(t, http.MethodGet, p.url+path, token, ""); code != tt.wantManagement {
					t.Errorf("GET %s: %d %s, want %d", path, code, body, tt.wantManagement)
				}
			}
			if code, body := request(t, http.MethodGet, p.url+"/openapi.yaml", "", ""); code != tt.wantAPI {
				t.Errorf("GET /openapi.yaml: %d %.80s, want %d", code, body, tt.wantAPI)
			}
		})
	}
}

// logAttrOf returns the string attribute key of the first JSON log line
// of logs whose msg is msg.
func logAttrOf(t *testing.T, logs, msg, key string) string {
	t.Helper()
	for _, line := range strings.Split(logs, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == msg {
			s, _ := rec[key].(string)
			return s
		}
	}
	t.Fatalf("no log line %q in:\n%s", msg, logs)
	return ""
}
