package store_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// TestEdgeDirectory: an edge finds the peer address of the other edge
// serving an HTTP or HTTPS endpoint, from endpoints and heartbeats
// written before and after it started, never itself, nor a TCP endpoint,
// nor an edge without a peer address; a deleted endpoint is forgotten.
// It names the account of the endpoint it finds.
func TestEdgeDirectory(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	if err := e.store.Edges().HeartbeatEdge(e.ctx, "edge-b", "10.0.0.2:7443"); err != nil {
		t.Fatal(err)
	}
	if err := e.store.Edges().HeartbeatEdge(e.ctx, "edge-a", "10.0.0.1:7443"); err != nil {
		t.Fatal(err)
	}
	session := func(edgeID string) store.TunnelSession {
		in := tunnelSession(schemas.NewID(schemas.PrefixCredential))
		in.EdgeID = edgeID
		ts, err := e.store.CreateTunnelSession(e.ctx, account.ID, in)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	onB, onA := session("edge-b"), session("edge-a")
	endpoint := func(ts store.TunnelSession, proto, url string) store.Endpoint {
		ep, err := e.store.CreateEndpoint(e.ctx, account.ID, store.Endpoint{TunnelSessionID: ts.ID, Proto: proto, URL: url, EdgeID: ts.EdgeID})
		if err != nil {
			t.Fatal(err)
		}
		return ep
	}
	before := endpoint(onB, "http", "http://Before.example.com:8000")

	dir := e.store.Edges().NewEdgeDirectory("edge-a")
	ctx, stop := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		dir.Run(ctx, slog.New(slog.DiscardHandler))
	}()
	defer func() {
		stop()
		<-done
	}()
	find := func(scheme, host, want string) {
		t.Helper()
		check.Eventually(t, 5*time.Second, scheme+" "+host+" at "+want, func() (string, bool) {
			peer, owner, ok := dir.Find(scheme, host)
			return peer, peer == want && ok == (want != "") && (owner == account.ID) == ok
		})
	}
	find("http", "before.example.com", "10.0.0.2:7443")
	endpoint(onB, "https", "https://after.example.com")
	endpoint(onB, "tcp", "tcp://tcp.example.com:20001")
	endpoint(onA, "http", "http://mine.example.com")
	find("https", "AFTER.example.com", "10.0.0.2:7443")
	find("http", "after.example.com", "")
	find("tcp", "tcp.example.com", "")
	find("http", "mine.example.com", "") // this edge's own

	if err := e.store.DeleteEndpoint(e.ctx, account.ID, before.ID); err != nil {
		t.Fatal(err)
	}
	find("http", "before.example.com", "")

	// Labeled tunnels: found by the account and a selection of their
	// labels, on another edge only, and forgotten once deleted.
	labeled := func(ts store.TunnelSession, labels map[string]string) store.Endpoint {
		ep, err := e.store.CreateEndpoint(e.ctx, account.ID, store.Endpoint{TunnelSessionID: ts.ID, Proto: store.ProtoLabeled, Labels: labels, EdgeID: ts.EdgeID})
		if err != nil {
			t.Fatal(err)
		}
		return ep
	}
	web := &store.TunnelGroupBackend{Labels: map[string]string{"edge": "web"}}
	api := &store.TunnelGroupBackend{Labels: map[string]string{"edge": "api"}}
	findLabeled := func(account string, b *store.TunnelGroupBackend, want string) {
		t.Helper()
		check.Eventually(t, 5*time.Second, "a labeled tunnel at "+want, func() (string, bool) {
			peer, ok := dir.FindLabeled(account, b.Selects)
			return peer, peer == want && ok == (want != "")
		})
	}
	onBWeb := labeled(onB, map[string]string{"edge": "web", "zone": "b"})
	labeled(onA, map[string]string{"edge": "api"})
	findLabeled(account.ID, web, "10.0.0.2:7443")
	findLabeled(account.ID, api, "")   // this edge's own
	findLabeled("acct_other", web, "") // another account's
	if err := e.store.DeleteEndpoint(e.ctx, account.ID, onBWeb.ID); err != nil {
		t.Fatal(err)
	}
	findLabeled(account.ID, web, "")

	// B stops offering a peer address.
	if err := e.store.Edges().HeartbeatEdge(e.ctx, "edge-b", ""); err != nil {
		t.Fatal(err)
	}
	find("https", "after.example.com", "")
}
