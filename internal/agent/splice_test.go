package agent_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/internal/agent/agentconfig"
	"github.com/sluicehq/sluice/internal/edgetest"
)

// TestSilentUpstreamDoesNotHoldTheSession: a TCP upstream that takes a
// connection and then neither reads, writes nor closes it does not keep
// the agent on a lost session: the agent reconnects, and stops.
func TestSilentUpstreamDoesNotHoldTheSession(t *testing.T) {
	te := edgetest.Start(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // never read, never closed
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			_ = c.Close()
		}
	})
	r := startAgent(t, te, te.Credential(acct), []agentconfig.Tunnel{{Name: "db", Proto: "tcp", Addr: ln.Addr().String()}})
	c, err := net.Dial("tcp", strings.TrimPrefix(r.tunnelURL(t, "db"), "tcp://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, "hello")
	waitFor(t, "the upstream's connection", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(held) == 1
	})
	first := r.Status().SessionID
	r.conns.cut()
	waitFor(t, "a new session", func() bool { st := r.Status(); return st.State == "online" && st.SessionID != first })
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestRawTunnelUpstreamClosesIdleConnection: the upstream of a raw HTTP
// tunnel closes its idle keep-alive connection (as Node's servers do
// after 5 s); the public client's next request on its own kept-alive
// connection still gets its answer, on a new stream.
func TestRawTunnelUpstreamClosesIdleConnection(t *testing.T) {
	te := edgetest.Start(t)
	var mu sync.Mutex
	var conns []net.Conn
	up := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }),
		ConnState: func(c net.Conn, s http.ConnState) {
			if s == http.StateIdle {
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
			}
		}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = up.Serve(ln) }()
	t.Cleanup(func() { _ = up.Close() })
	r := startAgent(t, te, te.Credential(acct), []agentconfig.Tunnel{{Name: "raw", Proto: "http", Addr: "http://" + ln.Addr().String(), Schemes: []string{"http"}}})
	host := hostOf(t, r.tunnelURL(t, "raw"))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	t.Cleanup(client.CloseIdleConnections)
	get := func() int {
		req, _ := http.NewRequest(http.MethodGet, "http://"+te.HTTPAddr+"/", nil)
		req.Host = host
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := get(); s != http.StatusOK {
		t.Fatalf("first request: %d", s)
	}
	waitFor(t, "the upstream's idle connection", func() bool { mu.Lock(); defer mu.Unlock(); return len(conns) == 1 })
	mu.Lock()
	_ = conns[0].Close()
	mu.Unlock()
	if s := get(); s != http.StatusOK {
		t.Fatalf("the next request on the kept-alive public connection, after the upstream closed its idle one: %d", s)
	}
}

// TestStopTunnelWhileItStarts: a tunnel stopped while its bind is in
// flight does not stay bound at the edge, listed or not.
func TestStopTunnelWhileItStarts(t *testing.T) {
	te := edgetest.Start(t)
	up := upstream(t)
	r := startAgent(t, te, te.Credential(acct), nil)
	waitFor(t, "the session", func() bool { return r.Status().State == "online" })
	for i := range 20 {
		name := "race" + string(rune('a'+i))
		type started struct {
			url string
			err error
		}
		res := make(chan started, 1)
		go func() {
			tu, err := r.StartTunnel(context.Background(), agentconfig.Tunnel{Name: name, Proto: "http", Addr: up.URL, Schemes: []string{"http"}})
			res <- started{tu.PublicURL, err}
		}()
		for r.StopTunnel(context.Background(), name) != nil {
		}
		got := <-res
		for _, tu := range r.Tunnels() {
			if tu.Name == name {
				t.Fatalf("iteration %d: the stopped tunnel is listed", i)
			}
		}
		if got.err != nil {
			continue // stopped before the bind, or as it was made
		}
		// Started, then stopped: its endpoint is gone.
		if resp, body := te.Get(t, hostOf(t, got.url), "/leak"); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("iteration %d: GET %s after the tunnel stopped: %d %q", i, got.url, resp.StatusCode, body)
		}
	}
}
