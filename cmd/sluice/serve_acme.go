package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	legolog "github.com/go-acme/lego/v5/log"
	"github.com/miekg/dns"
	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/internal/acme"
	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/schemas"
)

// acmeFlags configure the certificate jobs, off unless --acme-directory is
// given, --dev included: Let's Encrypt, even its staging, validates
// through public DNS, which a laptop's --dev does not have.
type acmeFlags struct {
	directory           string
	resolver            string
	interval            time.Duration
	serviceDomainOrders int
}

func (f *acmeFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.directory, "acme-directory", "", "the ACME certificate authority that issues the certificates of custom reserved domains, names under the first service domain (once it is delegated to --dns-listen) and agent ingresses with a certificate_management_policy (a wildcard's, a service domain name's and an agent ingress's region domains' through DNS-01 answered by --dns-listen, another's through HTTP-01 answered by --edge-http): "+acme.LetsEncrypt+", "+acme.LetsEncryptStaging+", or a directory URL (docs/operations.md; default: none, with --dev too: their jobs stay in progress)")
	fl.DurationVar(&f.interval, "acme-interval", 30*time.Second, "how often the process holding the certificate jobs' lease looks for the jobs due: new policies, retries_at and renews_at come, DNS records fixed")
	fl.IntVar(&f.serviceDomainOrders, "acme-service-domain-orders", 100, "how many certificate orders the names under the first service domain, which any account can reserve without proof, may have in any 3 hours, of all accounts and renewals included (each account besides at most 5): the rest wait, in progress, for a slot; the default is a third of Let's Encrypt's 300 new orders an ACME account in 3 hours, which every tenant's certificates share")
	fl.StringVar(&f.resolver, "acme-dns-resolver", "", "HOST:PORT of the recursive DNS resolver that checks the users' _acme-challenge CNAMEs and that the DNS of --dns-listen serves a challenge before the authority validates it (default: the first nameserver of /etc/resolv.conf)")
}

// validate returns what is wrong with the ACME flags.
func (f acmeFlags) validate() error {
	if f.directory == "" {
		if f.resolver != "" {
			return errors.New("--acme-dns-resolver goes with --acme-directory, whose jobs use it")
		}
		return nil
	}
	if dir := acme.DirectoryURL(f.directory); dir == f.directory {
		if u, err := url.Parse(dir); err != nil || u.Scheme != "https" || u.Host == "" {
			return fmt.Errorf("--acme-directory %q is neither %s, %s nor an https:// directory URL", f.directory, acme.LetsEncrypt, acme.LetsEncryptStaging)
		}
	}
	if f.interval <= 0 {
		return errors.New("--acme-interval must be positive, such as 30s")
	}
	if f.serviceDomainOrders <= 0 {
		return fmt.Errorf("--acme-service-domain-orders is %d: it must be positive, such as 100", f.serviceDomainOrders)
	}
	if f.resolver != "" {
		if _, _, err := net.SplitHostPort(f.resolver); err != nil {
			return fmt.Errorf("--acme-dns-resolver %q is not HOST:PORT, such as 127.0.0.53:53", f.resolver)
		}
	}
	return nil
}

// resolverAddr is --acme-dns-resolver, or the first nameserver of
// /etc/resolv.conf.
func (f acmeFlags) resolverAddr() (string, error) {
	if f.resolver != "" {
		return f.resolver, nil
	}
	conf, err := dns.ClientConfigFromFile("/etc/resolv.conf")
	if err != nil || len(conf.Servers) == 0 {
		return "", fmt.Errorf("--acme-directory needs a DNS resolver: /etc/resolv.conf names none (%v); give --acme-dns-resolver", err)
	}
	return net.JoinHostPort(conf.Servers[0], conf.Port), nil
}

// newACME makes the certificate jobs' manager, in a process serving the
// API (whose audit events it emits), with --acme-directory.
func (a *app) newACME(srv *api.Server, serviceDomains []string) error {
	f := a.flags.acme
	if f.directory == "" || !a.roles.api {
		return nil
	}
	resolver, err := f.resolverAddr()
	if err != nil {
		return err
	}
	if len(serviceDomains) == 0 {
		serviceDomains = api.DefaultServiceDomains
	}
	// lego logs through a logger of its own, text on stdout by default:
	// its lines go with serve's, in serve's format, on stderr.
	legolog.SetDefault(a.log.With("component", "acme", "library", "lego"))
	ingress := a.flags.ingress.config(nil)
	a.acme, err = acme.New(a.store.Certificates(), acme.Config{
		Directory: f.directory, ServiceDomain: serviceDomains[0], ServiceDomains: serviceDomains, Resolver: resolver,
		NSTargets: ingress.NSTargets, Regions: ingress.Regions,
		Holder: schemas.NewID("proc_"), Interval: f.interval, ServiceDomainOrders: f.serviceDomainOrders,
		Events: srv.CertificateEvents(), Logger: a.log.With("component", "acme"),
	})
	return err
}
