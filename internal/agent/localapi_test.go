package agent_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/agent"
	"github.com/sluicehq/sluice/internal/agent/agentconfig"
	"github.com/sluicehq/sluice/internal/agent/localapi"
	"github.com/sluicehq/sluice/internal/edgetest"
)

// TestLocalAPIThroughItsOwnTunnel: the local API, exposed through an
// HTTP tunnel of the configuration (addr its own, inspect false) at a
// domain its web_allow_hosts names, answers public requests (spec 4.5);
// a public request under another name is refused by the Host check.
func TestLocalAPIThroughItsOwnTunnel(t *testing.T) {
	te := edgetest.Start(t)
	te.Reserve(acct, "*.agents.example.test")
	captures := localapi.NewCaptures(localapi.CapturesConfig{})
	// The agent needs the API's address for its tunnel, and the API
	// needs the agent: the API's listener comes first.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	web := ln.Addr().String()
	tunnels := []agentconfig.Tunnel{
		{Name: "api", Proto: "http", Addr: "http://" + web, Domain: "laptop.agents.example.test", Schemes: []string{"http"}},
		{Name: "other", Proto: "http", Addr: "http://" + web, Domain: "other.agents.example.test", Schemes: []string{"http"}},
	}
	r := startAgent(t, te, te.Credential(acct), tunnels, func(o *agent.Options) { o.Captures = captures })
	api := localapi.New(localapi.Config{Backend: r.Agent, Captures: captures, DecodeTunnel: agentconfig.DecodeTunnelJSON,
		AllowHosts: []string{"laptop.agents.example.test"}})
	srv := &http.Server{Handler: api.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	r.tunnelURL(t, "api")
	r.tunnelURL(t, "other")

	resp, body := te.Get(t, "laptop.agents.example.test", "/api/tunnels")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/tunnels through the tunnel: %d %s", resp.StatusCode, body)
	}
	var list struct {
		Tunnels []struct {
			Name string `json:"name"`
		} `json:"tunnels"`
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil || len(list.Tunnels) != 2 {
		t.Fatalf("the tunnels through the tunnel: %s (%v)", body, err)
	}
	if resp, _ := te.Get(t, "other.agents.example.test", "/api/tunnels"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a Host web_allow_hosts does not name: %d, want 403", resp.StatusCode)
	}
}

// TestWebSocketThroughAnInspectedTunnel: an upgraded connection passes
// through the reverse proxy and the capture, both ways, and is captured
// (its 101) when it ends.
func TestWebSocketThroughAnInspectedTunnel(t *testing.T) {
	te := edgetest.Start(t)
	echo := func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "websocket" {
			http.Error(w, "upgrade only", http.StatusBadRequest)
			return
		}
		c, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.WriteString(rw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		_ = rw.Flush()
		_, _ = io.Copy(c, rw)
	}
	up := &http.Server{Handler: http.HandlerFunc(echo), ReadHeaderTimeout: 5 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = up.Serve(ln) }()
	t.Cleanup(func() { _ = up.Close() })
	captures := localapi.NewCaptures(localapi.CapturesConfig{})
	r := startAgent(t, te, te.Credential(acct), []agentconfig.Tunnel{httpTunnel("ws", "http://"+ln.Addr().String())},
		func(o *agent.Options) { o.Captures = captures })
	host := hostOf(t, r.tunnelURL(t, "ws"))

	c, err := net.Dial("tcp", te.HTTPAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "GET /chat HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", host)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("the upgrade: %v, %v", resp, err)
	}
	if _, err := io.WriteString(c, "ping over the upgraded connection"); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len("ping over the upgraded connection"))
	if _, err := io.ReadFull(br, got); err != nil || string(got) != "ping over the upgraded connection" {
		t.Fatalf("echo: %q, %v", got, err)
	}
	// The exchange is captured when it ends: close the connection.
	_ = c.Close()
	waitFor(t, "the upgrade's capture", func() bool {
		list := captures.List(10, "ws")
		return len(list) == 1 && strings.HasPrefix(list[0].Request.URI, "/chat")
	})
}

// TestFailsOverToTheNextEdgeAddress: with several edge addresses (an
// ingress's region domains), an agent whose first is down connects to
// the next.
func TestFailsOverToTheNextEdgeAddress(t *testing.T) {
	te := edgetest.Start(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := l.Addr().String()
	_ = l.Close()
	r := startAgent(t, te, te.Credential(acct), nil, func(o *agent.Options) { o.ServerAddrs = []string{down, te.Agents} })
	waitFor(t, "a session with the second address", func() bool { return r.Status().State == "online" })
	if st := r.Status(); st.Edge != te.Agents || !strings.Contains(st.LastError, down) {
		t.Fatalf("status %+v: want the session with %s after %s failed", st, te.Agents, down)
	}
}
