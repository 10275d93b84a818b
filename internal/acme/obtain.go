package acme

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"strings"

	legoacme "github.com/go-acme/lego/v5/acme"
	"github.com/go-acme/lego/v5/certcrypto"
	"github.com/go-acme/lego/v5/certificate"
	"github.com/go-acme/lego/v5/challenge/dns01"
	"github.com/go-acme/lego/v5/lego"
	"github.com/go-acme/lego/v5/registration"

	"github.com/sluicehq/sluice/internal/store"
)

// obtain checks what the domain's validation needs of the DNS, has the
// authority issue its certificate, and returns it, for run to store; step
// records what it does. A custom wildcard is validated through DNS-01 at its
// acme_challenge_cname_target, another custom domain through HTTP-01 at
// the edges, which its CNAME to its cname_target reaches; a name under
// the service domain, wildcard or not, through DNS-01 in the service
// domain's zone, once that is delegated to sluice's DNS.
func (m *Manager) obtain(ctx context.Context, d store.ReservedDomain, step func(msg string) error) (store.IssuedCertificate, error) {
	v, err := m.validation(ctx, d, step)
	if err != nil {
		return store.IssuedCertificate{}, err
	}
	if err := step(fmt.Sprintf("certificate provisioning is in progress: ordering a certificate of %s from %s through %s", d.Domain, m.directory, v.method)); err != nil {
		return store.IssuedCertificate{}, err
	}
	client, err := m.client(ctx)
	if err != nil {
		return store.IssuedCertificate{}, err
	}
	if err := v.setUp(client); err != nil {
		return store.IssuedCertificate{}, fmt.Errorf("setting up %s: %w", v.method, err)
	}
	if m.underServiceDomain(d.Domain) {
		if full := m.orders.take(d.AccountID, m.cfg.Now()); full != nil {
			return store.IssuedCertificate{}, full
		}
	}
	return m.order(ctx, client, []string{d.Domain}, d.CertPolicy.PrivateKeyType)
}

// order has the authority issue one certificate of the domains, with a
// key of privateKeyType, through the challenge client is set up for, and
// returns it as the store keeps it.
func (m *Manager) order(ctx context.Context, client *lego.Client, domains []string, privateKeyType string) (store.IssuedCertificate, error) {
	res, err := client.Certificate.Obtain(ctx, certificate.ObtainRequest{Domains: domains, Bundle: true, KeyType: keyType(privateKeyType)})
	if err != nil {
		return store.IssuedCertificate{}, fmt.Errorf("ordering the certificate of %s: %w", strings.Join(domains, ", "), err)
	}
	leaf, err := certcrypto.ParsePEMCertificate(res.Certificate)
	if err != nil {
		return store.IssuedCertificate{}, fmt.Errorf("reading the certificate the authority issued: %w", err)
	}
	return store.IssuedCertificate{
		CertificatePEM: string(res.Certificate), PrivateKeyPEM: string(res.PrivateKey), PrivateKeyType: privateKeyType,
		IssuedAt: m.cfg.Now(), RenewsAt: m.renewsAt(leaf.NotAfter),
	}, nil
}

// keyType is lego's key type of a policy's private_key_type.
func keyType(privateKeyType string) certcrypto.KeyType {
	if privateKeyType == store.KeyTypeRSA {
		return certcrypto.RSA2048
	}
	return certcrypto.EC256
}

// validation is how the authority validates a domain: the method, for
// messages, and what sets it up in a lego client.
type validation struct {
	method string
	setUp  func(client *lego.Client) error
}

// validation checks that the DNS is ready for the domain's validation,
// and returns it: for a name under the service domain, that the service
// domain is delegated to sluice's DNS (a *delegationError until it is:
// the job waits); for a custom domain, its CNAME (a *RecordMissing until
// it exists, the job waiting for it; a *DNSError if it names another
// target).
func (m *Manager) validation(ctx context.Context, d store.ReservedDomain, step func(msg string) error) (validation, error) {
	if m.underServiceDomain(d.Domain) {
		if err := m.serviceDelegation(ctx); err != nil {
			return validation{}, err
		}
		return validation{"DNS-01", func(client *lego.Client) error { return m.setDNS01(client, d, "") }}, nil
	}
	name, target, v := d.Domain, m.cnameTarget(d), validation{"HTTP-01", func(client *lego.Client) error {
		return client.Challenge.SetHTTP01Provider(&httpProvider{store: m.store})
	}}
	if store.IsWildcardDomain(d.Domain) {
		name, target = challengeName(d.Domain), m.target(d)
		v = validation{"DNS-01", func(client *lego.Client) error { return m.setDNS01(client, d, target) }}
	}
	if err := step(fmt.Sprintf("certificate provisioning is in progress: checking that %s is a CNAME of %s", name, target)); err != nil {
		return validation{}, err
	}
	if err := m.dns.checkCNAME(ctx, name, target); err != nil {
		return validation{}, err
	}
	return v, nil
}

// setDNS01 has lego answer DNS-01 with the challenges' TXT values in the
// store, under the domain's token, which sluice's DNS serves at target, a
// custom domain's acme_challenge_cname_target (lego is told to check it
// directly rather than follow the user's CNAME), or, target "", at the
// challenge's own name, in the service domain's zone.
func (m *Manager) setDNS01(client *lego.Client, d store.ReservedDomain, target string) error {
	p := &provider{store: m.store, token: store.DomainToken(d.ID), timeout: m.cfg.PropagationTimeout, pollInterval: m.cfg.PollInterval}
	return client.Challenge.SetDNS01Provider(p,
		dns01.WrapPreCheck(func(ctx context.Context, _, fqdn, value string, _ dns01.PreCheckFunc) (bool, error) {
			at := target
			if at == "" {
				at = fqdn
			}
			return m.dns.hasTXT(ctx, at, value), nil
		}))
}

// client returns a lego client of sluice's account with the authority,
// registering one (and storing its key) the first time.
func (m *Manager) client(ctx context.Context) (*lego.Client, error) {
	account, err := m.store.ACMEAccount(ctx, m.directory)
	if errors.Is(err, store.ErrNotFound) {
		account, err = m.register(ctx)
	}
	if err != nil {
		return nil, err
	}
	key, err := certcrypto.ParsePEMPrivateKey([]byte(account.PrivateKeyPEM))
	if err != nil {
		return nil, fmt.Errorf("reading the ACME account's key: %w", err)
	}
	return m.newClient(&user{key: key, reg: &legoacme.ExtendedAccount{Location: account.URL}})
}

// register makes a new account with the authority and stores it; if
// another process stored one first, it returns that one.
func (m *Manager) register(ctx context.Context) (store.ACMEAccount, error) {
	key, err := certcrypto.GeneratePrivateKey(certcrypto.EC256)
	if err != nil {
		return store.ACMEAccount{}, err
	}
	u := &user{key: key}
	client, err := m.newClient(u)
	if err != nil {
		return store.ACMEAccount{}, err
	}
	reg, err := client.Registration.Register(ctx, registration.RegisterOptions{TermsOfServiceAgreed: true})
	if err != nil {
		return store.ACMEAccount{}, fmt.Errorf("registering an account with %s: %w", m.directory, err)
	}
	account := store.ACMEAccount{Directory: m.directory, URL: reg.Location, PrivateKeyPEM: string(certcrypto.PEMEncode(key))}
	err = m.store.CreateACMEAccount(ctx, account)
	if errors.Is(err, store.ErrConflict) {
		return m.store.ACMEAccount(ctx, m.directory)
	}
	return account, err
}

func (m *Manager) newClient(u *user) (*lego.Client, error) {
	cfg := lego.NewConfig(u)
	cfg.CADirURL = m.directory
	cfg.UserAgent = "sluice"
	if m.cfg.HTTPClient != nil {
		cfg.HTTPClient = m.cfg.HTTPClient
	}
	cfg.Certificate.Timeout = m.cfg.JobTimeout
	client, err := lego.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("reaching the ACME directory %s: %w", m.directory, err)
	}
	return client, nil
}

// user is sluice's account with the authority, as lego takes it.
type user struct {
	key crypto.Signer
	reg *legoacme.ExtendedAccount
}

func (u *user) GetEmail() string                           { return "" }
func (u *user) GetRegistration() *legoacme.ExtendedAccount { return u.reg }
func (u *user) GetPrivateKey() crypto.Signer               { return u.key }
