package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/store"
)

// edgeChangeWithin is how soon an edge must learn what ends sessions.
const edgeChangeWithin = 2 * time.Second

// nextEdgeChange returns the first change from changes that match accepts,
// failing the test if none comes within edgeChangeWithin.
func nextEdgeChange(t *testing.T, changes <-chan store.EdgeChange, what string, match func(store.EdgeChange) bool) store.EdgeChange {
	t.Helper()
	timer := time.NewTimer(edgeChangeWithin)
	defer timer.Stop()
	for {
		select {
		case change, ok := <-changes:
			if !ok {
				t.Fatalf("watch closed while waiting for %s", what)
			}
			if change.Err != nil {
				t.Fatalf("change %+v: %v", change, change.Err)
			}
			if match(change) {
				return change
			}
		case <-timer.C:
			t.Fatalf("no %s within %v", what, edgeChangeWithin)
		}
	}
}

// TestWatchEdge reports each change that makes an edge end sessions: a
// credential deleted, a bot user deactivated or deleted, a reserved domain
// changed or deleted, a stop requested; and nothing of before the watch.
func TestWatchEdge(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	before, err := e.store.CreateCredential(e.ctx, account.ID, store.Credential{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	changes, err := e.store.Edges().WatchEdge(ctx)
	if err != nil {
		t.Fatalf("WatchEdge: %v", err)
	}
	bot, err := e.store.CreateBotUser(e.ctx, account.ID, store.BotUser{Name: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.store.CreateCredential(e.ctx, account.ID, store.Credential{})
	if err != nil {
		t.Fatal(err)
	}
	domain, err := e.store.CreateReservedDomain(e.ctx, account.ID, store.ReservedDomain{Domain: "app.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	ts := startSession(t, e, account.ID)

	steps := []struct {
		what  string
		do    func() error
		match func(store.EdgeChange) bool
	}{
		{"credential deleted", func() error { return errOf(e.store.DeleteCredential(e.ctx, account.ID, c.ID)) },
			func(ch store.EdgeChange) bool { return ch.Kind == store.EdgeCredential && ch.ID == c.ID && ch.Deleted }},
		{"bot user deactivated", func() error {
			return errOf(e.store.UpdateBotUser(e.ctx, account.ID, bot.ID, func(b *store.BotUser) error { b.Active = false; return nil }))
		}, func(ch store.EdgeChange) bool {
			return ch.Kind == store.EdgeBotUser && ch.ID == bot.ID && ch.BotUser != nil && !ch.BotUser.Active
		}},
		{"bot user deleted", func() error { return errOf(e.store.DeleteBotUser(e.ctx, account.ID, bot.ID)) },
			func(ch store.EdgeChange) bool { return ch.Kind == store.EdgeBotUser && ch.ID == bot.ID && ch.Deleted }},
		{"reserved domain changed", func() error {
			return errOf(e.store.UpdateReservedDomain(e.ctx, account.ID, domain.ID, func(d *store.ReservedDomain) error { d.Description = "changed"; return nil }))
		}, func(ch store.EdgeChange) bool {
			return ch.Kind == store.EdgeReservedDomain && ch.ID == domain.ID && ch.ReservedDomain != nil && ch.ReservedDomain.Description == "changed"
		}},
		{"reserved domain deleted", func() error { return errOf(e.store.DeleteReservedDomain(e.ctx, account.ID, domain.ID)) },
			func(ch store.EdgeChange) bool {
				return ch.Kind == store.EdgeReservedDomain && ch.ID == domain.ID && ch.Deleted
			}},
		{"stop requested", func() error { return e.store.StopTunnelSession(e.ctx, account.ID, ts.ID) },
			func(ch store.EdgeChange) bool {
				return ch.Kind == store.EdgeTunnelSession && ch.ID == ts.ID && ch.TunnelSession != nil && ch.TunnelSession.StopRequested
			}},
	}
	for _, step := range steps {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.what, err)
		}
		ch := nextEdgeChange(t, changes, step.what, func(ch store.EdgeChange) bool {
			if ch.ID == before.ID {
				t.Fatalf("the watch reported the credential made before it: %+v", ch)
			}
			return step.match(ch)
		})
		if ch.AccountID != account.ID {
			t.Fatalf("%s: account %s, want %s", step.what, ch.AccountID, account.ID)
		}
	}
	cancel()
	for range changes { // closed once ctx ends
	}
}
