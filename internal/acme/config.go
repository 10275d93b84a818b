package acme

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-acme/lego/v5/lego"

	"github.com/sluicehq/sluice/internal/store"
)

// The named values of Config.Directory (serve --acme-directory).
const (
	LetsEncrypt        = "letsencrypt"
	LetsEncryptStaging = "letsencrypt-staging"
)

// DirectoryURL returns the directory URL of a named authority, or name
// itself for any other (a URL, such as a Pebble's in tests).
func DirectoryURL(name string) string {
	switch name {
	case LetsEncrypt:
		return lego.DirectoryURLLetsEncrypt
	case LetsEncryptStaging:
		return lego.DirectoryURLLetsEncryptStaging
	}
	return name
}

// Store is what a Manager reads and writes: store.Certificates.
type Store interface {
	challenges
	httpChallenges
	staleChallenges
	FollowCertificateJobs(ctx context.Context, log *slog.Logger, apply func(store.CertificateChange), ready func())
	SetAgentIngressCertificateJob(ctx context.Context, accountID, id string, since time.Time, job store.CertificateJob) error
	SetAgentIngressCertificate(ctx context.Context, accountID, id string, since time.Time, issued store.IssuedCertificate) (store.TLSCertificate, error)
	SetDomainCertificateJob(ctx context.Context, accountID, domainID string, since time.Time, job store.CertificateJob) error
	SetDomainCertificate(ctx context.Context, accountID, domainID string, since time.Time, issued store.IssuedCertificate, events store.CertificateEvents) (store.TLSCertificate, error)
	TakeLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	ACMEAccount(ctx context.Context, directory string) (store.ACMEAccount, error)
	CreateACMEAccount(ctx context.Context, a store.ACMEAccount) error
}

// Config configures a Manager.
type Config struct {
	// Directory is the ACME directory URL, or LetsEncrypt or
	// LetsEncryptStaging. Required.
	Directory string
	// ServiceDomain is the first service domain, under which
	// acme.<service domain> holds the challenges' TXT values of custom
	// wildcards, and whose own zone sluice's DNS serves, once delegated
	// to it, with those of the reserved domains under it. Required.
	ServiceDomain string
	// ServiceDomains are all the service's domains, ServiceDomain first:
	// names under the others get no jobs, as sluice's DNS serves none of
	// their zones and they have no CNAME targets; nil: ServiceDomain
	// alone.
	ServiceDomains []string
	// Resolver is the HOST:PORT of the recursive DNS resolver that checks
	// the users' CNAMEs and that sluice's DNS serves a challenge before
	// the authority is told to validate it. Required.
	Resolver string
	// NSTargets are the service's name servers, the ns_targets that an
	// agent ingress's domain must have as its NS records before its
	// certificate is ordered, and the service domain before those of the
	// reserved domains under it are; nil: agent ingresses and names under
	// the service domain get no jobs.
	NSTargets []string
	// Regions are the regions of the agent ingresses' region domains,
	// tunnel.<region>.<domain>, which their certificate covers; nil:
	// agent ingresses get no jobs.
	Regions []string
	// Holder names this process in the lease. Required.
	Holder string
	// Events builds the audit events of a certificate stored. Required.
	Events store.CertificateEvents
	// HTTPClient talks to the authority; nil: lego's default, which trusts
	// the system's roots.
	HTTPClient *http.Client
	// Interval is how often the jobs due are looked for; 0: 30 s.
	Interval time.Duration
	// JobTimeout bounds one job; 0: 5 minutes. It must be shorter than
	// store.MaxACMEChallengeAge, after which a job's TXT values may be
	// dropped.
	JobTimeout time.Duration
	// PropagationTimeout bounds the wait for sluice's DNS to serve a
	// challenge, polled every PollInterval; 0: 2 minutes and 2 s.
	PropagationTimeout, PollInterval time.Duration
	// RetryInterval is the first delay of an INTERNAL_ERROR's retry,
	// doubled (with jitter) at each failure up to 6 hours; 0: 1 minute.
	RetryInterval time.Duration
	// RenewBefore is how long before expiry a certificate is renewed;
	// 0: 30 days.
	RenewBefore time.Duration
	// ServiceDomainOrders is how many certificate orders the names under
	// the service domain, of all accounts and renewals included, may have
	// in any 3 hours, besides 5 for each account (budget.go); 0: 100, a
	// third of Let's Encrypt's 300 new orders an account in 3 hours.
	ServiceDomainOrders int
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// Logger; nil: slog.Default().
	Logger *slog.Logger
}

func (c *Config) setDefaults() {
	defaults := []struct {
		d   *time.Duration
		def time.Duration
	}{
		{&c.Interval, 30 * time.Second},
		{&c.JobTimeout, 5 * time.Minute},
		{&c.PropagationTimeout, 2 * time.Minute},
		{&c.PollInterval, 2 * time.Second},
		{&c.RetryInterval, time.Minute},
		{&c.RenewBefore, 30 * 24 * time.Hour},
	}
	for _, d := range defaults {
		if *d.d == 0 {
			*d.d = d.def
		}
	}
	if c.ServiceDomainOrders == 0 {
		c.ServiceDomainOrders = 100
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Validate returns an error naming the first required field not set.
func (c Config) Validate() error {
	switch {
	case c.Directory == "":
		return errors.New("acme: Directory is required")
	case c.ServiceDomain == "":
		return errors.New("acme: ServiceDomain is required")
	case c.Resolver == "":
		return errors.New("acme: Resolver is required")
	case c.Holder == "":
		return errors.New("acme: Holder is required")
	case c.Events == nil:
		return errors.New("acme: Events is required")
	case c.ServiceDomainOrders < 0:
		return fmt.Errorf("acme: ServiceDomainOrders %d must not be negative", c.ServiceDomainOrders)
	case c.JobTimeout >= store.MaxACMEChallengeAge:
		return fmt.Errorf("acme: JobTimeout %s must be shorter than %s, after which a job's challenge values may be dropped as stale", c.JobTimeout, store.MaxACMEChallengeAge)
	}
	return nil
}
