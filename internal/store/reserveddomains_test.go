package store_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// TestReservedDomainRules holds a domain to a fully qualified name or a
// wildcard "*." of one, lower-cased, never a whole public suffix, and a
// region to the eight of the specification.
func TestReservedDomainRules(t *testing.T) {
	long := strings.Repeat("a", 63)
	for _, c := range []struct {
		domain, want, err string
	}{
		{"App.Example.COM", "app.example.com", ""},
		{"app.example.com.", "app.example.com", ""},
		{"xn--bcher-kva.example", "xn--bcher-kva.example", ""},
		{"*.Sub.Example.com", "*.sub.example.com", ""},
		{"*.example.com", "*.example.com", ""},
		{long + ".example.com", long + ".example.com", ""},
		{"", "", "required"},
		{"localhost", "", "two labels"},
		{"a" + long + ".example.com", "", "at most 63"},
		{strings.Repeat(long+".", 4) + "com", "", "at most 253"},
		{"*." + strings.Repeat(long+".", 3) + strings.Repeat("a", 56) + ".com", "", "at most 253"}, // 252 after "*.",
		{"-a.example.com", "", "hyphen"},
		{"a-.example.com", "", "hyphen"},
		{"a..example.com", "", "empty label"},
		{"a_b.example.com", "", `'_'`},
		{"bücher.example", "", "punycode"},
		{"a.*.example.com", "", "only as its first label"},
		{"*a.example.com", "", "whole first label"},
		{"**.example.com", "", "whole first label"},
		{"*.*.example.com", "", "only as its first label"},
		{"*.com", "", "public suffix"},
		{"*.co.uk", "", "public suffix"},
		{"*.github.io", "", "public suffix"},
	} {
		got, err := store.CheckReservedDomain(c.domain)
		var invalid *store.ValidationError
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("CheckReservedDomain(%q) = %q, %v; want %q", c.domain, got, err, c.want)
		case c.err != "" && (!errors.As(err, &invalid) || invalid.Field != "domain" || !strings.Contains(err.Error(), c.err)):
			t.Errorf("CheckReservedDomain(%q) = %v; want a *ValidationError of domain saying %q", c.domain, err, c.err)
		}
	}
	service := []string{"sluice.app", "sluice.dev"}
	for domain, bad := range map[string]bool{
		"sluice.app": true, "*.sluice.app": true, "*.app": true, "*.sluice.dev": true,
		"me.sluice.app": false, "*.me.sluice.app": false, "example.com": false,
	} {
		if err := store.CheckNotServiceDomain(domain, service); (err != nil) != bad {
			t.Errorf("CheckNotServiceDomain(%q) = %v; want an error %v", domain, err, bad)
		}
	}
	if !store.UnderServiceDomain("me.sluice.app", service) || store.UnderServiceDomain("sluice.app.example.com", service) {
		t.Error("UnderServiceDomain: want me.sluice.app under sluice.app, not sluice.app.example.com")
	}

	e := newEnv(t)
	account := e.createAccount(t, "team")
	_, err := e.store.CreateReservedDomain(e.ctx, account.ID, store.ReservedDomain{Domain: "a.example.com", Region: "mars"})
	var invalid *store.ValidationError
	if !errors.As(err, &invalid) || invalid.Field != "region" || !strings.Contains(err.Error(), "au, eu, ap, us, us-cal-1, jp, in, sa") {
		t.Fatalf("region mars: %v, want a *ValidationError of region listing the regions", err)
	}
	_, err = e.store.CreateReservedDomain(e.ctx, account.ID, store.ReservedDomain{Domain: "a.example.com", CertPolicy: &store.CertificatePolicy{Authority: "zerossl"}})
	if !errors.As(err, &invalid) || invalid.Field != "certificate_management_policy.authority" {
		t.Fatalf("authority zerossl: %v, want a *ValidationError of it", err)
	}
	_, err = e.store.CreateReservedDomain(e.ctx, account.ID, store.ReservedDomain{Domain: "a.example.com", CertPolicy: &store.CertificatePolicy{PrivateKeyType: "ed25519"}})
	if !errors.As(err, &invalid) || invalid.Field != "certificate_management_policy.private_key_type" {
		t.Fatalf("key type ed25519: %v, want a *ValidationError of it", err)
	}
	_, err = e.store.CreateReservedDomain(e.ctx, account.ID, store.ReservedDomain{Domain: "a.example.com", Description: strings.Repeat("x", 256)})
	if !errors.As(err, &invalid) || invalid.Field != "description" {
		t.Fatalf("a long description: %v, want a *ValidationError of it", err)
	}
}

// TestReservedDomainLifecycle reserves a wildcard and a plain domain, reads,
// lists, updates and deletes them: the wildcard gets letsencrypt and ecdsa
// and a provisioning job with no renewal, the plain one no policy; the
// domain cannot change; another account finds neither.
func TestReservedDomainLifecycle(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	other := e.createAccount(t, "other team")

	w, err := e.store.CreateReservedDomain(e.ctx, account.ID, store.ReservedDomain{ID: "rd_x", AccountID: other.ID, Domain: "*.Sub.Example.com", Region: "eu"})
	if err != nil {
		t.Fatal(err)
	}
	if schemas.CheckID(schemas.PrefixReservedDomain, w.ID) != nil || w.AccountID != account.ID || w.Domain != "*.sub.example.com" || w.Region != "eu" {
		t.Fatalf("created %+v", w)
	}
	if p := w.CertPolicy; p == nil || *p != (store.CertificatePolicy{Authority: "letsencrypt", PrivateKeyType: "ecdsa"}) {
		t.Fatalf("wildcard policy %+v, want letsencrypt ecdsa", p)
	}
	if s := w.CertStatus; s == nil || s.RenewsAt != nil || s.ProvisioningJob == nil || s.ProvisioningJob.Msg != store.ProvisioningMsg || s.ProvisioningJob.StartedAt.IsZero() {
		t.Fatalf("wildcard status %+v, want a job in progress and no renewal", s)
	}
	rsa, err := e.store.CreateReservedDomain(e.ctx, account.ID, store.ReservedDomain{Domain: "*.rsa.example.com", CertPolicy: &store.CertificatePolicy{PrivateKeyType: "rsa"}})
	if err != nil || rsa.CertPolicy.PrivateKeyType != "rsa" || rsa.CertPolicy.Authority != "letsencrypt" {
		t.Fatalf("wildcard with rsa: %+v, %v", rsa, err)
	}
	p, err := e.store.CreateReservedDomain(e.ctx, account.ID, store.ReservedDomain{Domain: "app.example.com"})
	if err != nil || p.CertPolicy != nil || p.CertStatus != nil || p.Region != "" {
		t.Fatalf("plain domain: %+v, %v; want no policy, status or region", p, err)
	}
	if got, err := e.store.GetReservedDomain(e.ctx, account.ID, w.ID); err != nil || got.Domain != w.Domain {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	items, next, err := e.store.ListReservedDomains(e.ctx, account.ID, store.Page{})
	if err != nil || next != "" || len(items) != 3 || items[0].ID != p.ID {
		t.Fatalf("List = %v, %q, %v", items, next, err)
	}

	var invalid *store.ValidationError
	_, err = e.store.UpdateReservedDomain(e.ctx, account.ID, p.ID, func(d *store.ReservedDomain) error { d.Domain = "other.example.com"; return nil })
	if !errors.As(err, &invalid) || invalid.Field != "domain" {
		t.Fatalf("changing the domain: %v, want a *ValidationError of domain", err)
	}
	u, err := e.store.UpdateReservedDomain(e.ctx, account.ID, p.ID, func(d *store.ReservedDomain) error {
		d.Description, d.Region, d.CertPolicy = "prod", "us", &store.CertificatePolicy{Authority: "letsencrypt", PrivateKeyType: "rsa"}
		return nil
	})
	if err != nil || u.Description != "prod" || u.Region != "us" || u.CertStatus == nil || u.CertStatus.ProvisioningJob == nil {
		t.Fatalf("update = %+v, %v; want a policy with a job", u, err)
	}
	off, err := e.store.UpdateReservedDomain(e.ctx, account.ID, p.ID, func(d *store.ReservedDomain) error { d.CertPolicy = nil; return nil })
	if err != nil || off.CertPolicy != nil || off.CertStatus != nil {
		t.Fatalf("removing the policy: %+v, %v; want no policy and no status", off, err)
	}

	for name, err := range map[string]error{
		"Get":    errOf(e.store.GetReservedDomain(e.ctx, other.ID, w.ID)),
		"Update": errOf(e.store.UpdateReservedDomain(e.ctx, other.ID, w.ID, func(*store.ReservedDomain) error { return nil })),
		"Delete": errOf(e.store.DeleteReservedDomain(e.ctx, other.ID, w.ID)),
	} {
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s from another account: %v, want ErrNotFound", name, err)
		}
	}
	for _, d := range []store.ReservedDomain{w, rsa, p} {
		if _, err := e.store.DeleteReservedDomain(e.ctx, account.ID, d.ID); err != nil {
			t.Fatal(err)
		}
	}
	if n := countPrefix(e.rawEntries(t), "reserved_domain"); n != 0 {
		t.Fatalf("%d reserved domain keys left after the deletes, want 0", n)
	}
}

// TestReservedDomainsUniqueAcrossAccounts refuses a domain any account has
// reserved, in any case, with a *DomainTakenError, and frees it on delete;
// of many creates of one domain at once from two processes and two
// accounts, exactly one wins.
func TestReservedDomainsUniqueAcrossAccounts(t *testing.T) {
	e := newEnv(t)
	a := e.createAccount(t, "a")
	b := e.createAccount(t, "b")
	d, err := e.store.CreateReservedDomain(e.ctx, a.ID, store.ReservedDomain{Domain: "app.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	for _, account := range []string{a.ID, b.ID} {
		err := errOf(e.store.CreateReservedDomain(e.ctx, account, store.ReservedDomain{Domain: "APP.example.com"}))
		var taken *store.DomainTakenError
		if !errors.As(err, &taken) || !errors.Is(err, store.ErrConflict) || strings.Contains(err.Error(), a.ID) {
			t.Fatalf("a taken domain in account %s: %v, want a *DomainTakenError naming no account", account, err)
		}
	}
	if _, err := e.store.DeleteReservedDomain(e.ctx, a.ID, d.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateReservedDomain(e.ctx, b.ID, store.ReservedDomain{Domain: "app.example.com"}); err != nil {
		t.Fatalf("after the delete, another account: %v", err)
	}

	const burst = 12
	stores := []*store.Store{e.store, e.openAnother(t)}
	accounts := []string{a.ID, b.ID}
	var (
		mu         sync.Mutex
		won, taken int
		others     []error
		wg         sync.WaitGroup
	)
	for i := range burst {
		wg.Go(func() {
			_, err := stores[i%2].CreateReservedDomain(e.ctx, accounts[(i/2)%2], store.ReservedDomain{Domain: "*.race.example.com"})
			var takenErr *store.DomainTakenError
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.As(err, &takenErr):
				taken++
			case errors.Is(err, store.ErrConflict):
			default:
				others = append(others, err)
			}
		})
	}
	wg.Wait()
	if won != 1 || taken == 0 || len(others) > 0 {
		t.Fatalf("%d of %d creates won, %d taken, others %v; want exactly one", won, burst, taken, others)
	}
}

// TestReservedDomainLimitAndConcurrentUpdates refuses a domain over
// Limits.ReservedDomains, and loses no update of many at once.
func TestReservedDomainLimitAndConcurrentUpdates(t *testing.T) {
	e := newEnvWith(t, store.Config{Limits: store.Limits{ReservedDomains: 2}})
	account := e.createAccount(t, "team")
	first, err := e.store.CreateReservedDomain(e.ctx, account.ID, store.ReservedDomain{Domain: "a.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateReservedDomain(e.ctx, account.ID, store.ReservedDomain{Domain: "b.example.com"}); err != nil {
		t.Fatal(err)
	}
	err = errOf(e.store.CreateReservedDomain(e.ctx, account.ID, store.ReservedDomain{Domain: "c.example.com"}))
	var limit *store.LimitError
	if !errors.As(err, &limit) || limit.Limit != store.LimitReservedDomains || limit.Max != 2 {
		t.Fatalf("over the limit: %v", err)
	}
	if store.DefaultMaxReservedDomains != 100 {
		t.Fatalf("DefaultMaxReservedDomains = %d, want 100", store.DefaultMaxReservedDomains)
	}

	const writers = 8
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Go(func() {
			_, errs[i] = e.store.UpdateReservedDomain(e.ctx, account.ID, first.ID, func(d *store.ReservedDomain) error {
				d.Metadata += "x"
				return nil
			})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	got, err := e.store.GetReservedDomain(e.ctx, account.ID, first.ID)
	if err != nil || got.Metadata != strings.Repeat("x", writers) {
		t.Fatalf("after %d concurrent appends: %q, %v; want every one", writers, got.Metadata, err)
	}
}

// overlapping reports whether two reserved domains share names: one's
// name, or the name under its wildcard, is the other's or under it.
func overlapping(a, b string) bool {
	a, b = strings.TrimPrefix(a, "*."), strings.TrimPrefix(b, "*.")
	return a == b || strings.HasSuffix(a, "."+b) || strings.HasSuffix(b, "."+a)
}

// TestReservedDomainsOverlapAcrossAccounts keeps each account's
// reservations apart from every other's: a domain, its wildcard and the
// names under them are one account's, which may reserve within them; a
// delete frees them; and of many overlapping creates at once, from two
// processes and two accounts, the winners never overlap across accounts.
func TestReservedDomainsOverlapAcrossAccounts(t *testing.T) {
	e := newEnvWith(t, store.Config{ServiceDomains: []string{"sluice.app"}})
	a := e.createAccount(t, "a")
	b := e.createAccount(t, "b")
	for i, c := range []struct {
		first, second  string // first by a, then second by b
		within, covers string // of b's *DomainTakenError, "" if allowed
	}{
		{"example.com", "app.example.com", "example.com", ""},
		{"example.com", "*.example.com", "example.com", ""},
		{"example.com", "*.a.b.example.com", "example.com", ""},
		{"*.example.com", "a.b.example.com", "example.com", ""},
		{"*.example.com", "example.com", "example.com", ""},
		{"app.example.com", "*.example.com", "", "example.com"},
		{"a.b.example.com", "example.com", "", "example.com"},
		{"*.a.b.example.com", "b.example.com", "", "b.example.com"},
		{"a.example.com", "b.example.com", "", ""},
		{"*.a.example.com", "*.b.example.com", "", ""},
		{"x.sluice.app", "y.sluice.app", "", ""},
		{"*.me.sluice.app", "x.me.sluice.app", "me.sluice.app", ""},
		{"x.you.sluice.app", "you.sluice.app", "", "you.sluice.app"},
	} {
		// Each case under a name of its own: c1.example.com, c2...
		at := func(d string) string { return strings.Replace(d, "example.com", fmt.Sprintf("c%d.example.com", i), 1) }
		first, second := at(c.first), at(c.second)
		within, covers := at(c.within), at(c.covers)
		if !strings.Contains(c.first, "example.com") {
			first, second, within, covers = c.first, c.second, c.within, c.covers
		}
		held, err := e.store.CreateReservedDomain(e.ctx, a.ID, store.ReservedDomain{Domain: first})
		if err != nil {
			t.Fatalf("%s by a: %v", first, err)
		}
		_, err = e.store.CreateReservedDomain(e.ctx, b.ID, store.ReservedDomain{Domain: second})
		var taken *store.DomainTakenError
		switch {
		case c.within == "" && c.covers == "":
			if err != nil {
				t.Errorf("%s by b after %s by a: %v, want it reserved", second, first, err)
			}
			continue
		case !errors.As(err, &taken) || !errors.Is(err, store.ErrConflict) || taken.Within != within || taken.Covers != covers || strings.Contains(err.Error(), a.ID):
			t.Errorf("%s by b after %s by a: %v, want a *DomainTakenError within %q, covering %q, naming no account", second, first, err, within, covers)
			continue
		}
		if !strings.Contains(err.Error(), "belong to one account") {
			t.Errorf("the refusal %q does not say the rule", err)
		}
		mine, err := e.store.CreateReservedDomain(e.ctx, a.ID, store.ReservedDomain{Domain: second})
		if err != nil {
			t.Errorf("%s by a, which holds %s: %v, want it reserved", second, first, err)
		}
		for _, d := range []store.ReservedDomain{held, mine} {
			if _, err := e.store.DeleteReservedDomain(e.ctx, a.ID, d.ID); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.store.CreateReservedDomain(e.ctx, b.ID, store.ReservedDomain{Domain: second}); err != nil {
			t.Errorf("%s by b once a deleted its domains: %v", second, err)
		}
	}

	stores := []*store.Store{e.store, e.openAnother(t)}
	wants := map[string][]string{
		a.ID: {"*.r.example.net", "p.r.example.net", "q.example.net"},
		b.ID: {"x.r.example.net", "example.net", "*.q.example.net"},
	}
	var wg sync.WaitGroup
	errs := make([]error, 24)
	for i := range errs {
		account := []string{a.ID, b.ID}[i%2]
		domain := wants[account][(i/2)%3]
		wg.Go(func() {
			_, err := stores[(i/6)%2].CreateReservedDomain(e.ctx, account, store.ReservedDomain{Domain: domain})
			var taken *store.DomainTakenError
			if err != nil && !errors.As(err, &taken) && !errors.Is(err, store.ErrConflict) {
				errs[i] = err
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	held := map[string][]string{}
	for _, account := range []string{a.ID, b.ID} {
		domains, _, err := e.store.ListReservedDomains(e.ctx, account, store.Page{})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range domains {
			if strings.HasSuffix(d.Domain, "example.net") {
				held[account] = append(held[account], d.Domain)
			}
		}
	}
	if len(held[a.ID])+len(held[b.ID]) == 0 {
		t.Fatal("no create of the burst won")
	}
	for _, x := range held[a.ID] {
		for _, y := range held[b.ID] {
			if overlapping(x, y) {
				t.Errorf("after the burst, a holds %s and b holds %s", x, y)
			}
		}
	}
}
