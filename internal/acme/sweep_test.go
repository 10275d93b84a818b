package acme

import (
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/sluicehq/sluice/internal/acmetest"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
)

// TestSweepStaleChallenges: a challenge value that no job removed (the
// job died mid-order) is dropped by the lease holder's tick once it is
// store.MaxACMEChallengeAge old, and sluice's DNS stops answering it; a
// younger one is kept and answered.
func TestSweepStaleChallenges(t *testing.T) {
	e := newEnv(t, func(p *acmetest.Pebble) string { return p.Directory })
	dead, alive := store.DomainToken("rd_dead"), store.DomainToken("rd_alive")
	if err := e.store.Certificates().AddACMEChallenge(e.ctx, dead, "left-by-a-dead-job"); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(store.MaxACMEChallengeAge - time.Minute)
	if err := e.store.Certificates().AddACMEChallenge(e.ctx, alive, "pending"); err != nil {
		t.Fatal(err)
	}
	answers := func(what, token string, want ...string) {
		t.Helper()
		check.Eventually(t, 5*time.Second, what, func() ([]string, bool) {
			resp, err := e.zone.Forward(token+".acme."+serviceDomain+".", dns.TypeTXT)
			if err != nil {
				return []string{err.Error()}, false
			}
			var values []string
			for _, rr := range resp.Answer {
				if txt, ok := rr.(*dns.TXT); ok {
					values = append(values, txt.Txt...)
				}
			}
			return values, slices.Equal(values, want)
		})
	}
	e.manager.tick(e.ctx)
	answers("the value younger than the bound kept", dead, "left-by-a-dead-job")
	e.clock.Advance(time.Minute)
	e.manager.tick(e.ctx)
	answers("the stale value dropped", dead)
	answers("the fresh value kept", alive, "pending")
}

// TestJobTimeoutBound: a JobTimeout that store.MaxACMEChallengeAge does
// not outlast is refused, as the sweep could drop a running job's values.
func TestJobTimeoutBound(t *testing.T) {
	cfg := Config{Directory: LetsEncryptStaging, ServiceDomain: serviceDomain, Resolver: "127.0.0.1:53", Holder: "test", Events: noEvents}
	for _, tt := range []struct {
		timeout time.Duration
		ok      bool
	}{{0, true}, {store.MaxACMEChallengeAge - time.Minute, true}, {store.MaxACMEChallengeAge, false}} {
		cfg.JobTimeout = tt.timeout
		if err := cfg.Validate(); (err == nil) != tt.ok {
			t.Errorf("JobTimeout %s: %v, want ok %v", tt.timeout, err, tt.ok)
		}
	}
}
