package store_test

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/internal/natstest"
	"github.com/sluicehq/sluice/internal/store"
)

// TestReservedDomainLegacyDeleteSameBase deletes a reservation made before
// the domain tree, which no node counts, at the base of one of the
// account's that a node does count: the other stays counted.
func TestReservedDomainLegacyDeleteSameBase(t *testing.T) {
	e := newEnvWith(t, store.Config{ServiceDomains: []string{"sluice.app"}})
	a := e.createAccount(t, "a")
	b := e.createAccount(t, "b")
	legacy, err := e.store.CreateUntrackedReservedDomain(e.ctx, a.ID, store.ReservedDomain{Domain: "example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateReservedDomain(e.ctx, a.ID, store.ReservedDomain{Domain: "*.example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.DeleteReservedDomain(e.ctx, a.ID, legacy.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateReservedDomain(e.ctx, b.ID, store.ReservedDomain{Domain: "app.example.com"}); err == nil {
		t.Errorf("b reserved app.example.com under a's tracked *.example.com after a deleted its legacy example.com")
	}
}

// TestReservedDomainLegacyDeleteSibling deletes a reservation made before
// the domain tree beside a counted one of the account: the name above
// both still counts the other.
func TestReservedDomainLegacyDeleteSibling(t *testing.T) {
	e := newEnvWith(t, store.Config{ServiceDomains: []string{"sluice.app"}})
	a := e.createAccount(t, "a")
	b := e.createAccount(t, "b")
	legacy, err := e.store.CreateUntrackedReservedDomain(e.ctx, a.ID, store.ReservedDomain{Domain: "x.example.org"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateReservedDomain(e.ctx, a.ID, store.ReservedDomain{Domain: "y.example.org"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.DeleteReservedDomain(e.ctx, a.ID, legacy.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateReservedDomain(e.ctx, b.ID, store.ReservedDomain{Domain: "*.example.org"}); err == nil {
		t.Errorf("b reserved *.example.org over a's tracked y.example.org after a deleted its legacy x.example.org")
	}
}

// TestReservedDomainTreeAsCreated deletes a reservation through a store
// whose service domains differ from the one that created it (a rolling
// change of --service-domains): the delete uncounts the nodes the create
// counted, and leaves none behind.
func TestReservedDomainTreeAsCreated(t *testing.T) {
	e := newEnvWith(t, store.Config{})
	a := e.createAccount(t, "a")
	b := e.createAccount(t, "b")
	other := e.openAnotherWith(t, store.Config{ServiceDomains: []string{"tunnels.example.com"}})
	d, err := e.store.CreateReservedDomain(e.ctx, a.ID, store.ReservedDomain{Domain: "me.tunnels.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.DeleteReservedDomain(e.ctx, a.ID, d.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateReservedDomain(e.ctx, b.ID, store.ReservedDomain{Domain: "*.tunnels.example.com"}); err != nil {
		t.Errorf("after the delete, b's *.tunnels.example.com (on a store without service domains): %v", err)
	}
}

// openAnotherWith opens another store on the env's server, with cfg.
func (e env) openAnotherWith(t *testing.T, cfg store.Config) *store.Store {
	t.Helper()
	_, js := natstest.Connect(t, e.srv)
	s, err := store.Open(e.ctx, js, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

// TestTrackDomainTree counts reservations and agent ingresses made before
// the domain tree counted them, once, from two stores at once: another
// account can no longer reserve under them, and one that overlaps
// another's stays uncounted.
func TestTrackDomainTree(t *testing.T) {
	e := newEnvWith(t, store.Config{ServiceDomains: []string{"sluice.app"}})
	a := e.createAccount(t, "a")
	b := e.createAccount(t, "b")
	for _, c := range []struct{ account, domain string }{
		{a.ID, "*.example.net"}, {a.ID, "example.net"}, {b.ID, "y.example.org"},
		{a.ID, "*.example.com"}, {b.ID, "x.example.com"}, // an overlap made before the tree
	} {
		if _, err := e.store.CreateUntrackedReservedDomain(e.ctx, c.account, store.ReservedDomain{Domain: c.domain}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ account, domain string }{
		{a.ID, "ingress.example.info"},
		{b.ID, "tunnel.us.ingress.example.info"}, // made before agent ingresses were counted
	} {
		var err error
		if c.account == a.ID {
			_, err = e.store.CreateUntrackedAgentIngress(e.ctx, c.account, store.AgentIngress{Domain: c.domain})
		} else {
			_, err = e.store.CreateUntrackedReservedDomain(e.ctx, c.account, store.ReservedDomain{Domain: c.domain})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	stores := []*store.Store{e.store, e.openAnother(t)}
	skipped := make([][]string, len(stores))
	errs := make([]error, len(stores))
	var wg sync.WaitGroup
	for i, s := range stores {
		wg.Go(func() { skipped[i], errs[i] = s.TrackDomainTree(e.ctx) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	uncounted := slices.Compact(slices.Sorted(slices.Values(slices.Concat(skipped...))))
	if len(uncounted) != 2 ||
		!slices.Contains(uncounted, "reserved domain *.example.com") && !slices.Contains(uncounted, "reserved domain x.example.com") ||
		!slices.Contains(uncounted, "reserved domain tunnel.us.ingress.example.info") {
		t.Errorf("skipped %q, want one side of each of the two overlaps, the younger of the agent ingress and the reservation under it", uncounted)
	}
	for _, c := range []struct{ account, domain string }{
		{b.ID, "app.example.net"}, {a.ID, "*.y.example.org"}, {a.ID, "example.org"}, {b.ID, "*.example.info"},
	} {
		if _, err := e.store.CreateReservedDomain(e.ctx, c.account, store.ReservedDomain{Domain: c.domain}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("%s after the reservations were counted: %v, want a conflict", c.domain, err)
		}
	}
}
