package edge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

// Bounds of the edge's requests to OpenID Connect providers: an issuer
// URL is written by whoever binds an endpoint.
const (
	// providerTimeout bounds one request to a provider: its discovery,
	// its keys, a code's exchange.
	providerTimeout = 10 * time.Second
	// maxProviderBody bounds what the edge reads of a provider's answer.
	maxProviderBody = 1 << 20
	// providerTTL is how long a provider's discovery document is used
	// before it is fetched again; providerRetry how long a failed
	// discovery is answered from memory before it is tried again, so that
	// a provider that is down is not asked at each request.
	providerTTL   = time.Hour
	providerRetry = 15 * time.Second
	// maxProviders bounds the providers an edge keeps.
	maxProviders = 1024
)

// errPrivateAddress refuses a provider on an address of the edge's own
// networks.
var errPrivateAddress = errors.New("the issuer's address is loopback, private or link-local: the edge does not reach it")

// providers discovers OpenID Connect providers and keeps them, by issuer.
type providers struct {
	client *http.Client
	now    func() time.Time

	mu       sync.Mutex
	byIssuer map[string]*providerEntry
}

// providerEntry is a discovery, under way (ready open) or done.
type providerEntry struct {
	ready    chan struct{}
	provider *oidc.Provider
	err      error
	at       time.Time
}

// newProviders returns the providers of an edge. Unless private, the edge
// refuses to reach an issuer on a loopback, private or link-local
// address, so that whoever binds an endpoint cannot make it request the
// edge's own networks.
func newProviders(now func() time.Time, private bool) *providers {
	dialer := &net.Dialer{Timeout: providerTimeout}
	if !private {
		dialer.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return err
			}
			if a := ap.Addr().Unmap(); a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsUnspecified() || a.IsMulticast() {
				return errPrivateAddress
			}
			return nil
		}
	}
	transport := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   providerTimeout,
		ResponseHeaderTimeout: providerTimeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
	}
	return &providers{
		client: &http.Client{
			Transport: limitedBodies{transport},
			Timeout:   providerTimeout,
			// The provider's endpoints answer without redirects.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		now:      now,
		byIssuer: map[string]*providerEntry{},
	}
}

// limitedBodies reads at most maxProviderBody of each answer.
type limitedBodies struct{ rt http.RoundTripper }

func (l limitedBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.rt.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = limitedBody{Reader: io.LimitReader(resp.Body, maxProviderBody), Closer: resp.Body}
	return resp, nil
}

type limitedBody struct {
	io.Reader
	io.Closer
}

// context returns ctx carrying the providers' client, for go-oidc and
// oauth2.
func (p *providers) context(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, p.client)
}

// get returns the provider of issuer, discovering it when it has none
// fresh; one discovery of an issuer runs at a time, the other requests
// waiting for it (or for ctx).
func (p *providers) get(ctx context.Context, issuer string) (*oidc.Provider, error) {
	now := p.now()
	p.mu.Lock()
	e, ok := p.byIssuer[issuer]
	if ok {
		select {
		case <-e.ready:
			if e.err == nil && now.Sub(e.at) >= providerTTL || e.err != nil && now.Sub(e.at) >= providerRetry {
				ok = false
			}
		default:
		}
	}
	if !ok {
		if len(p.byIssuer) >= maxProviders {
			clear(p.byIssuer) // discovered again as needed: bounded
		}
		e = &providerEntry{ready: make(chan struct{})}
		p.byIssuer[issuer] = e
		go p.discover(e, issuer)
	}
	p.mu.Unlock()
	select {
	case <-e.ready:
		return e.provider, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// discover fetches the discovery document of issuer into e, within
// providerTimeout, whoever waits for it.
func (p *providers) discover(e *providerEntry, issuer string) {
	ctx, cancel := context.WithTimeout(p.context(context.Background()), providerTimeout)
	defer cancel()
	e.provider, e.err = oidc.NewProvider(ctx, issuer)
	if e.err != nil {
		e.err = fmt.Errorf("discovering the OpenID Connect provider %s: %w", issuer, e.err)
	}
	e.at = p.now()
	close(e.ready)
}
