package edge_test

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"golang.ngrok.com/muxado/v2"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/tunnelwire"
	"github.com/sluicehq/sluice/schemas"
)

// rawAgent authenticates with the edge over muxado, as an agent does,
// asking for heartbeats every second with a second's tolerance, and then
// beats only when told.
func rawAgent(t *testing.T, te *testEdge, token string) (muxado.TypedStreamSession, string) {
	t.Helper()
	conn, err := tls.Dial("tcp", te.Agents, &tls.Config{RootCAs: te.CA.Pool(), ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	sess := muxado.NewTypedStreamSession(muxado.Client(conn, &muxado.Config{}))
	t.Cleanup(func() { _ = sess.Close() })
	st, err := sess.OpenTypedStream(muxado.StreamType(tunnelwire.CallAuth))
	if err != nil {
		t.Fatal(err)
	}
	req := tunnelwire.Auth{Versions: []string{"3"}, Extra: tunnelwire.AuthExtra{Authtoken: tunnelwire.Secret(token),
		HeartbeatInterval: int64(time.Second), HeartbeatTolerance: int64(time.Second)}}
	if err := tunnelwire.WriteMessage(st, req); err != nil {
		t.Fatal(err)
	}
	var resp tunnelwire.AuthResponse
	if err := tunnelwire.ReadMessage(st, &resp); err != nil || resp.Error != "" {
		t.Fatalf("auth: %v %q", err, resp.Error)
	}
	return sess, resp.ClientID
}

// TestSilentAgentIsDisconnected: an agent that stops beating is
// disconnected once its interval and tolerance have passed, and one that
// beats stays.
func TestSilentAgentIsDisconnected(t *testing.T) {
	te := startEdge(t)
	account := schemas.NewID(schemas.PrefixAccount)
	silent, _ := rawAgent(t, te, te.Credential(account))
	beating, _ := rawAgent(t, te, te.Credential(account))
	hb, err := beating.OpenTypedStream(tunnelwire.HeartbeatStream)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		beat := []byte{1, 2, 3, 4}
		echo := make([]byte, 4)
		for ctx.Err() == nil {
			if _, err := hb.Write(beat); err != nil {
				return
			}
			if _, err := hb.Read(echo); err != nil {
				return
			}
			time.Sleep(300 * time.Millisecond) // the agent's interval, not synchronisation
		}
	}()
	started := time.Now()
	check.Eventually(t, 5*time.Second, "the silent agent's session ended", func() (int, bool) {
		stops := te.Events.OfKind(t, "agent_session_stop.v0")
		return len(stops), len(stops) == 1
	})
	if d := time.Since(started); d < 2*time.Second {
		t.Fatalf("the silent agent was disconnected after %v, before its interval and tolerance (2 s)", d)
	}
	stops := te.Events.OfKind(t, "agent_session_stop.v0")
	if got := dig(stops[0], "error"); got != "the agent missed its heartbeats" {
		t.Fatalf("the stop's reason %v", got)
	}
	// The beating agent's session is still there: a call is answered.
	st, err := beating.OpenTypedStream(muxado.StreamType(tunnelwire.CallServerInfo))
	if err != nil {
		t.Fatalf("the beating agent's session: %v", err)
	}
	_ = tunnelwire.WriteMessage(st, struct{}{})
	var info tunnelwire.ServerInfoResponse
	if err := tunnelwire.ReadMessage(st, &info); err != nil || info.Region == "" {
		t.Fatalf("ServerInfo on the beating session: %+v %v", info, err)
	}
	_ = silent
}

// TestOneHeartbeatStreamASession: a second heartbeat stream is closed,
// so an agent cannot make the edge hold a goroutine per stream.
func TestOneHeartbeatStreamASession(t *testing.T) {
	te := startEdge(t)
	sess, _ := rawAgent(t, te, te.Credential(schemas.NewID(schemas.PrefixAccount)))
	first, err := sess.OpenTypedStream(tunnelwire.HeartbeatStream)
	if err != nil {
		t.Fatal(err)
	}
	second, err := sess.OpenTypedStream(tunnelwire.HeartbeatStream)
	if err != nil {
		t.Fatal(err)
	}
	_ = second.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = second.Write([]byte{9, 9, 9, 9})
	if n, err := second.Read(make([]byte, 4)); err == nil {
		t.Fatalf("the second heartbeat stream echoed %d bytes, want it closed", n)
	}
	_ = first.SetDeadline(time.Now().Add(5 * time.Second))
	echo := make([]byte, 4)
	if _, err := first.Write([]byte{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	if _, err := first.Read(echo); err != nil || echo[3] != 4 {
		t.Fatalf("the first heartbeat stream: %v %v, want its beat echoed", echo, err)
	}
}
