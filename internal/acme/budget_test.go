package acme

import (
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/acmetest"
)

// TestOrderBudget: the budget takes orders until the service's total or
// the account's share in the window is placed, then refuses with the
// time a slot frees, for the service or the account; a slot freed is
// taken again; it holds no order that has left the window.
func TestOrderBudget(t *testing.T) {
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	type order struct {
		at      time.Duration // after start
		account string
		// full is "" for an order taken, else "service", "account" or
		// "both", refused until next (after start).
		full string
		next time.Duration
	}
	for _, tt := range []struct {
		name   string
		total  int
		orders []order
	}{
		{"the account's share", 100, []order{
			{0, "a", "", 0}, {time.Minute, "a", "", 0}, {2 * time.Minute, "a", "", 0}, {3 * time.Minute, "a", "", 0}, {4 * time.Minute, "a", "", 0},
			{5 * time.Minute, "a", "account", 3 * time.Hour},
			{5 * time.Minute, "b", "", 0}, // another account is not held up
			{3 * time.Hour, "a", "", 0},   // the first order left the window
			{3 * time.Hour, "a", "account", 3*time.Hour + time.Minute},
		}},
		{"the service's total", 3, []order{
			{0, "a", "", 0}, {time.Hour, "b", "", 0}, {2 * time.Hour, "c", "", 0},
			{2 * time.Hour, "d", "service", 3 * time.Hour},
			{3 * time.Hour, "d", "", 0},
			{3 * time.Hour, "e", "service", 4 * time.Hour},
		}},
		{"both spent: the later", 6, []order{
			{0, "x", "", 0}, {time.Hour, "a", "", 0}, {time.Hour, "a", "", 0}, {time.Hour, "a", "", 0}, {time.Hour, "a", "", 0}, {2 * time.Hour, "a", "", 0},
			{2 * time.Hour, "a", "both", 4 * time.Hour}, // the service's frees at 3h, the account's at 4h
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := newOrderBudget(tt.total)
			for i, o := range tt.orders {
				full := b.take(o.account, start.Add(o.at))
				switch {
				case o.full == "" && full != nil:
					t.Fatalf("order %d of %s at %s refused: %v", i, o.account, o.at, full)
				case o.full == "":
					continue
				case full == nil:
					t.Fatalf("order %d of %s at %s taken, want refused (%s)", i, o.account, o.at, o.full)
				case full.Service != (o.full != "account") || full.Account != (o.full != "service") || !full.Next.Equal(start.Add(o.next)):
					t.Errorf("order %d of %s at %s: %+v, want %s's budget spent until %s", i, o.account, o.at, full, o.full, o.next)
				}
			}
			if len(b.placed) > tt.total {
				t.Errorf("the budget holds %d orders, more than its total %d", len(b.placed), tt.total)
			}
		})
	}
}

// TestServiceDomainOrderBudget: with the service's budget at one order
// in 3 hours, the first of two names under the delegated service domain
// gets its certificate, the other waits in progress, no error_code nor
// retries_at, its msg saying for what and until when, and is not ordered
// at the next tick; once the window has passed, it gets its certificate.
func TestServiceDomainOrderBudget(t *testing.T) {
	e := newEnv(t, func(p *acmetest.Pebble) string { return p.Directory })
	e.manager.orders = newOrderBudget(1)
	e.zone.NS(serviceDomain, nsTargets...)
	first := e.reserve(t, "*.a1."+serviceDomain)
	second := e.reserve(t, "*.a2."+serviceDomain)
	e.manager.tick(e.ctx)
	if got := e.domain(t, first.ID); got.CertificateID == "" {
		t.Fatalf("%s: no certificate, job %+v", got.Domain, got.CertStatus.ProvisioningJob)
	}
	next := e.clock.Now().Add(3 * time.Hour).UTC().Format(time.RFC3339)
	for range 2 {
		got := e.domain(t, second.ID)
		job := got.CertStatus.ProvisioningJob
		if got.CertificateID != "" || job == nil || job.ErrorCode != "" || job.RetriesAt != nil ||
			!strings.Contains(job.Msg, "waiting for the service's budget of certificate orders") || !strings.Contains(job.Msg, "tried again at "+next) {
			t.Fatalf("%s over the budget: certificate %q, job %+v; want one in progress waiting for the budget until %s", got.Domain, got.CertificateID, job, next)
		}
		e.clock.Advance(time.Hour)
		e.manager.tick(e.ctx)
	}
	e.clock.Advance(time.Hour)
	e.manager.tick(e.ctx)
	if got := e.domain(t, second.ID); got.CertificateID == "" || got.CertStatus.ProvisioningJob != nil {
		t.Fatalf("%s, a slot freed: certificate %q, job %+v; want a certificate", got.Domain, got.CertificateID, got.CertStatus.ProvisioningJob)
	}
	if len(e.manager.orders.placed) != 1 {
		t.Errorf("the budget holds %d orders, want the last one", len(e.manager.orders.placed))
	}
}
