package agent_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/agent"
	"github.com/sluicehq/sluice/internal/agent/agentconfig"
	"github.com/sluicehq/sluice/internal/edgetest"
)

// silentConn is a connection that can go silent as a dead network does:
// nothing more arrives, and what is written goes nowhere, with no error.
type silentConn struct {
	net.Conn
	once   sync.Once
	silent chan struct{}
}

func (c *silentConn) Read(p []byte) (int, error) {
	select {
	case <-c.silent:
		return c.blocked()
	default:
	}
	n, err := c.Conn.Read(p)
	select {
	case <-c.silent:
		return c.blocked()
	default:
		return n, err
	}
}

// blocked waits until the connection is closed.
func (c *silentConn) blocked() (int, error) {
	var b [1]byte
	for {
		if _, err := c.Conn.Read(b[:]); err != nil {
			return 0, err
		}
	}
}

func (c *silentConn) Write(p []byte) (int, error) {
	select {
	case <-c.silent:
		return len(p), nil
	default:
		return c.Conn.Write(p)
	}
}

func (c *silentConn) goSilent() { c.once.Do(func() { close(c.silent) }) }

// TestHeartbeatFindsADeadConnection: a connection that goes silent
// without closing is found dead by the heartbeat within its tolerance,
// and the agent reconnects.
func TestHeartbeatFindsADeadConnection(t *testing.T) {
	te := edgetest.Start(t)
	var mu sync.Mutex
	var first *silentConn
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = &silentConn{Conn: c, silent: make(chan struct{})}
			return first, nil
		}
		return c, nil
	}
	const tolerance = 2 * time.Second
	r := startAgent(t, te, te.Credential(acct), []agentconfig.Tunnel{httpTunnel("web", "http://127.0.0.1:1")}, func(o *agent.Options) {
		o.Dial = dial
		o.HeartbeatInterval, o.HeartbeatTolerance = time.Second, tolerance
	})
	waitFor(t, "the session", func() bool { return r.Status().State == "online" })
	waitFor(t, "a heartbeat's latency", func() bool { return r.Status().Latency > 0 })
	firstSession := r.Status().SessionID
	mu.Lock()
	first.goSilent()
	mu.Unlock()
	silentAt := time.Now()
	waitFor(t, "the agent to leave the silent session", func() bool { return r.Status().SessionID != firstSession })
	if took := time.Since(silentAt); took > tolerance+2*time.Second {
		t.Fatalf("the dead connection was found after %s, tolerance %s", took, tolerance)
	}
	waitFor(t, "a new session", func() bool { return r.Status().State == "online" })
	r.tunnelURL(t, "web")
}
