package store_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/internal/store"
)

// take is one create that holds a name: a reserved domain, or an agent
// ingress (ingress true).
type take struct {
	account string
	domain  string
	ingress bool
}

// do creates it on s.
func (c take) do(e env, s *store.Store) error {
	if c.ingress {
		return errOf(s.CreateAgentIngress(e.ctx, c.account, store.AgentIngress{Domain: c.domain}))
	}
	return errOf(s.CreateReservedDomain(e.ctx, c.account, store.ReservedDomain{Domain: c.domain}))
}

func (c take) String() string {
	if c.ingress {
		return "agent ingress " + c.domain
	}
	return "reserved domain " + c.domain
}

// TestDomainTreeAcrossFamilies holds agent ingresses and reserved domains
// in one tree, with the same overlap rules both ways (issue 23): another
// account can take no name at, under or over an agent ingress's domain,
// its tunnel.<region>. names included, nor make an agent ingress at,
// under or over another's reservation; an account nests its own names as
// it likes.
func TestDomainTreeAcrossFamilies(t *testing.T) {
	e := newEnvWith(t, store.Config{ServiceDomains: []string{"sluice.app"}})
	a := e.createAccount(t, "a").ID
	b := e.createAccount(t, "b").ID
	for _, c := range []struct {
		take
		refused bool
	}{
		{take{a, "*.apps.a-corp.com", false}, false},
		{take{a, "app.a-corp.com", false}, false},
		{take{b, "apps.a-corp.com", true}, true},   // over A's wildcard
		{take{b, "x.apps.a-corp.com", true}, true}, // under it
		{take{b, "a-corp.com", true}, true},        // over A's names
		{take{b, "app.a-corp.com", true}, true},    // at A's name
		{take{a, "a-corp.com", true}, false},       // A's own, over its names
		{take{a, "ingress.b-corp.com", true}, false},
		{take{b, "tunnel.us.ingress.b-corp.com", false}, true}, // where A's agents connect
		{take{b, "*.ingress.b-corp.com", false}, true},
		{take{b, "ingress.b-corp.com", false}, true},
		{take{b, "*.b-corp.com", false}, true}, // over A's agent ingress
		{take{b, "b-corp.com", true}, true},
		{take{b, "other.b-corp.com", false}, false}, // a sibling
		{take{b, "other2.b-corp.com", true}, false},
		{take{a, "tunnel.us.ingress.b-corp.com", false}, false}, // A's own
		{take{a, "*.ingress.b-corp.com", false}, false},
		{take{a, "deep.x.ingress.b-corp.com", true}, false},
	} {
		err := c.do(e, e.store)
		switch {
		case c.refused && !errors.Is(err, store.ErrConflict):
			t.Errorf("%s of %s: %v, want a conflict", c.take, c.account, err)
		case c.refused && !errors.As(err, new(*store.DomainTakenError)):
			t.Errorf("%s of %s: %v, want a *DomainTakenError", c.take, c.account, err)
		case !c.refused && err != nil:
			t.Errorf("%s of %s: %v", c.take, c.account, err)
		}
	}

	// A delete frees the names for any account.
	ingress, err := e.store.CreateAgentIngress(e.ctx, a, store.AgentIngress{Domain: "freed.example.org"})
	if err != nil {
		t.Fatal(err)
	}
	if err := (take{b, "*.freed.example.org", false}).do(e, e.store); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("b's wildcard under a's agent ingress: %v, want a conflict", err)
	}
	if _, err := e.store.DeleteAgentIngress(e.ctx, a, ingress.ID); err != nil {
		t.Fatal(err)
	}
	if err := (take{b, "*.freed.example.org", false}).do(e, e.store); err != nil {
		t.Errorf("b's wildcard after a deleted its agent ingress: %v", err)
	}
}

// TestDomainTreeRaceAcrossFamilies races, from two store processes, an
// agent ingress of one account against an overlapping reservation of
// another, both ways round: exactly one of each pair wins.
func TestDomainTreeRaceAcrossFamilies(t *testing.T) {
	e := newEnv(t)
	stores := []*store.Store{e.store, e.openAnother(t)}
	a := e.createAccount(t, "a").ID
	b := e.createAccount(t, "b").ID
	const rounds = 8
	for i := range rounds {
		name := fmt.Sprintf("r%d.example.com", i)
		pairs := [][2]take{
			{{a, name, true}, {b, "*." + name, false}},
			{{a, "x." + name, true}, {b, name, false}},
			{{a, "tunnel.us." + name, false}, {b, name, true}},
		}
		pair := pairs[i%len(pairs)]
		errs := make([]error, 2)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for j, c := range pair {
			wg.Go(func() {
				<-start
				errs[j] = c.do(e, stores[j])
			})
		}
		close(start)
		wg.Wait()
		won := 0
		for j, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, store.ErrConflict):
				t.Fatalf("round %d, %s: %v", i, pair[j], err)
			}
		}
		if won != 1 {
			t.Errorf("round %d: %s and %s: %d won (%v), want exactly one", i, pair[0], pair[1], won, errs)
		}
	}
}

// TestHTTPSEdgeHostportUnderOthersIngress refuses a hostport under the
// account's wildcard that another account's agent ingress holds, one made
// before agent ingresses were counted in the domain tree, as the issue's
// edge on tunnel.us.<another account's ingress domain> was; the
// account's own agent ingress there is no bar.
func TestHTTPSEdgeHostportUnderOthersIngress(t *testing.T) {
	e := newEnv(t)
	a := e.createAccount(t, "a").ID
	b := e.createAccount(t, "b").ID
	if _, err := e.store.CreateUntrackedAgentIngress(e.ctx, a, store.AgentIngress{Domain: "ingress.a-corp.com"}); err != nil {
		t.Fatal(err)
	}
	reserve(t, e, b, "*.a-corp.com")
	err := errOf(e.store.CreateHTTPSEdge(e.ctx, b, store.HTTPSEdge{Hostports: []string{"tunnel.us.ingress.a-corp.com:443"}}))
	if v := (*store.ValidationError)(nil); !errors.As(err, &v) || v.Field != "hostports[0]" || !strings.Contains(err.Error(), "agent ingress") || strings.Contains(err.Error(), "agin_") {
		t.Errorf("b's hostport under a's agent ingress: %v, want a ValidationError of hostports[0] naming no id", err)
	}
	if _, err := e.store.CreateHTTPSEdge(e.ctx, b, store.HTTPSEdge{Hostports: []string{"www.a-corp.com:443"}}); err != nil {
		t.Errorf("b's hostport beside a's agent ingress: %v", err)
	}
	if _, err := e.store.CreateAgentIngress(e.ctx, b, store.AgentIngress{Domain: "mine.a-corp.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateHTTPSEdge(e.ctx, b, store.HTTPSEdge{Hostports: []string{"x.mine.a-corp.com:443"}}); err != nil {
		t.Errorf("b's hostport under its own agent ingress: %v", err)
	}
}
