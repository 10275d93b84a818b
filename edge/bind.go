package edge

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/internal/acl"
	"github.com/sluicehq/sluice/internal/dnsname"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/tunnelwire"
	"github.com/sluicehq/sluice/trafficpolicy"
)

// More error codes of binds.
const (
	codeBindRead      = "610"
	codeBindProto     = "611"
	codeBindURL       = "612"
	codeBindACL       = "613"
	codeNotReserved   = "614"
	codeHostInUse     = "615"
	codePortInUse     = "616"
	codeNoPorts       = "617"
	codeEndpointLimit = "618"
	codeBindLimit     = "619"
	codeBindID        = "620"
	codeNoHTTPS       = "621"
	codeBindPolicy    = "622"
)

// The random subdomains of the edge domain are randomPart random letters
// and digits, then signPart more that sign them for the account
// (Edge.randomLabel): another account cannot bind a name the edge gave,
// even one made public, while its agent is away.
const (
	randomPart     = 8
	signPart       = 8
	randomAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
)

// endpoint is a bound endpoint of a session.
type endpoint struct {
	session *session
	bindID  string
	record  store.Endpoint
	// proto is "http", "https" or "tcp"; host its host name, port its
	// TCP port (0 for HTTP).
	proto string
	host  string
	port  int
	url   string
	// listener is a TCP endpoint's.
	listener net.Listener
	// labels are a labeled tunnel's (proto store.ProtoLabeled).
	labels map[string]string
	// policy is the endpoint's traffic policy, as its bind gave it: its
	// HTTP phases for an HTTP endpoint, on_tcp_connect for a TCP one;
	// nil for none.
	policy *trafficpolicy.Policy
}

// bindError is a refused bind: what the agent shows its user.
type bindError struct{ msg string }

func (b *bindError) Error() string { return b.msg }

func refuseBind(code, format string, args ...any) error {
	return &bindError{msg: fmt.Sprintf(format, args...) + " (ERR_SLUICE_" + code + ")"}
}

// bind serves a Bind call.
func (s *session) bind(req tunnelwire.Bind) tunnelwire.BindResponse {
	resp := tunnelwire.BindResponse{ID: req.ID, Proto: req.Proto}
	ep, err := s.bindEndpoint(req)
	if err != nil {
		var be *bindError
		if !errors.As(err, &be) {
			s.edge.cfg.Log.Warn("binding an endpoint", "session", s.record.ID, "error", err)
			err = refuseBind(codeAuthUnknown, "the edge could not bind the endpoint just now: try again")
		}
		resp.Error = err.Error()
		return resp
	}
	resp.ID = ep.bindID
	resp.URL = ep.url
	resp.Options = boundOptions(req.Options, ep)
	resp.Extra = tunnelwire.BindResponseExtra{TunnelID: ep.record.ID}
	return resp
}

// boundOptions returns the options of a bound endpoint, as the edge
// answers them (see tunnelwire.BindResponse): the agent's, as it sent
// them, with the endpoint's URL and its host or address set.
func boundOptions(sent json.RawMessage, ep *endpoint) json.RawMessage {
	opts := map[string]json.RawMessage{}
	if len(sent) > 0 {
		// Options that are no object were refused, or are null.
		_ = json.Unmarshal(sent, &opts)
	}
	set := func(key, value string) {
		b, _ := json.Marshal(value)
		opts[key] = b
	}
	set("URL", ep.url)
	if ep.proto == "tcp" {
		set("Addr", net.JoinHostPort(ep.host, strconv.Itoa(ep.port)))
	} else {
		set("Hostname", ep.host)
	}
	b, err := json.Marshal(opts)
	if err != nil {
		return nil
	}
	return b
}

// bindEndpoint decides the endpoint a Bind asks for, checks that the
// session may have it, records it and starts serving it.
func (s *session) bindEndpoint(req tunnelwire.Bind) (*endpoint, error) {
	e := s.edge
	var opts tunnelwire.BindOptions
	if len(req.Options) > 0 && string(req.Options) != "null" {
		if err := json.Unmarshal(req.Options, &opts); err != nil {
			return nil, refuseBind(codeBindRead, "the bind's options could not be read: %v", err)
		}
	}
	bindID := req.ID
	if bindID == "" {
		bindID = randomLabel(16)
	}
	if len(bindID) > 128 {
		return nil, refuseBind(codeBindID, "the bind id is %d bytes, over 128", len(bindID))
	}
	s.mu.Lock()
	_, taken := s.binds[bindID]
	count := len(s.binds)
	s.mu.Unlock()
	if taken {
		return nil, refuseBind(codeBindID, "the session has a bind with id %q already: close it first", bindID)
	}
	if count >= e.cfg.Limits.BindsPerSession {
		return nil, refuseBind(codeBindLimit, "the session has %d endpoints, as many as one agent session may: close one, or start another agent", count)
	}
	ep := &endpoint{session: s, bindID: bindID, proto: req.Proto}
	ctx, cancel := context.WithTimeout(s.ctx, callTimeout)
	defer cancel()
	var domainID string
	switch req.Proto {
	case "http", "https":
		host, random, err := s.httpHost(req.Proto, opts)
		if err != nil {
			return nil, err
		}
		if err := s.allowed(host); err != nil {
			return nil, err
		}
		if !random {
			if domainID, err = s.reservation(ctx, host); err != nil {
				return nil, err
			}
		}
		ep.host = host
		ep.url = e.httpURL(req.Proto, host)
		if opts.TrafficPolicy != "" {
			policy, err := e.parseEndpointPolicy(opts.TrafficPolicy, "http")
			if err != nil {
				return nil, err
			}
			ep.policy = policy
		}
		if req.Proto == "https" && e.cfg.HTTPSPort == 0 {
			return nil, refuseBind(codeNoHTTPS, "this edge serves no HTTPS: bind http://%s instead", host)
		}
		if req.Proto == "http" && e.cfg.HTTPPort == 0 {
			return nil, refuseBind(codeNoHTTPS, "this edge serves no plain HTTP: bind https://%s instead", host)
		}
	case "tcp":
		if opts.TrafficPolicy != "" {
			policy, err := e.parseEndpointPolicy(opts.TrafficPolicy, "tcp")
			if err != nil {
				return nil, err
			}
			ep.policy = policy
		}
		port, err := s.tcpPort(opts)
		if err != nil {
			return nil, err
		}
		ep.host, ep.port = e.cfg.TCPHost, port
		ep.url = "tcp://" + net.JoinHostPort(e.cfg.TCPHost, strconv.Itoa(port))
	default:
		return nil, refuseBind(codeBindProto, "endpoints of protocol %q are not served: bind http, https or tcp", req.Proto)
	}
	if err := e.claim(ep); err != nil {
		return nil, err
	}
	if ep.proto == "tcp" {
		// A free port is chosen by claim: the ACL is checked on it.
		if err := s.allowed(net.JoinHostPort(ep.host, strconv.Itoa(ep.port))); err != nil {
			e.release(ep)
			return nil, err
		}
	}
	record, err := e.cfg.Store.CreateEndpoint(ctx, s.record.AccountID, store.Endpoint{
		TunnelSessionID: s.record.ID, Proto: req.Proto, URL: ep.url, PublicURL: ep.url,
		Hostport: hostport(ep), Domain: domainID, UpstreamURL: clip(req.ForwardsTo, 1024),
		Metadata: clip(req.Extra.Metadata, 4096), Description: clip(req.Extra.Description, 255),
		EdgeID: e.cfg.EdgeID,
	})
	if err != nil {
		e.release(ep)
		if errors.Is(err, store.ErrLimit) {
			return nil, refuseBind(codeEndpointLimit, "the account has as many endpoints as it may: %v. Close one first", err)
		}
		return nil, err
	}
	ep.record = record
	s.mu.Lock()
	if s.ctx.Err() != nil {
		s.mu.Unlock()
		e.removeEndpoint(ep)
		return nil, refuseBind(codeAuthUnknown, "the session ended")
	}
	s.binds[bindID] = ep
	s.mu.Unlock()
	e.Metrics.endpoints.Add(1)
	if ep.listener != nil {
		if e.track() {
			go func() {
				defer e.wg.Done()
				e.serveTCP(ep)
			}()
		}
	}
	return ep, nil
}

// hostport is an endpoint's host:port.
func hostport(ep *endpoint) string {
	port := ep.port
	if port == 0 {
		port = ep.session.edge.publicPort(ep.proto)
	}
	return net.JoinHostPort(ep.host, strconv.Itoa(port))
}

// publicPort is the port of the public listener of an HTTP scheme.
func (e *Edge) publicPort(proto string) int {
	if proto == "https" {
		return e.cfg.HTTPSPort
	}
	return e.cfg.HTTPPort
}

// httpURL is the public URL of an HTTP endpoint.
func (e *Edge) httpURL(proto, host string) string {
	port := e.publicPort(proto)
	if port == 0 || proto == "http" && port == 80 || proto == "https" && port == 443 {
		return proto + "://" + host
	}
	return proto + "://" + net.JoinHostPort(host, strconv.Itoa(port))
}

// allowed returns the refusal of a bind of target the credential's ACL
// does not allow, or nil.
func (s *session) allowed(target string) error {
	if len(s.credential.ACL) == 0 {
		return nil
	}
	if ok, err := acl.Allows(s.credential.ACL, target); err != nil || !ok {
		return refuseBind(codeBindACL, "the credential's ACL does not let it bind %s: add a rule bind:%s to credential %s, or use another credential", target, target, s.credential.ID)
	}
	return nil
}

// httpHost returns the host an HTTP bind asks for, and whether it is a
// random subdomain of the edge domain (which needs no reservation).
func (s *session) httpHost(proto string, opts tunnelwire.BindOptions) (string, bool, error) {
	e := s.edge
	host := ""
	if u, err := url.Parse(opts.URL); err == nil && opts.URL != "" && u.Host == "" && u.Path == "" && u.Scheme == proto {
		opts.URL = "" // "http://": any host
	}
	switch {
	case opts.URL != "":
		u, err := url.Parse(opts.URL)
		if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/") {
			return "", false, refuseBind(codeBindURL, "%q is no endpoint URL: give %s://<host>, such as %s://app.example.com", opts.URL, proto, proto)
		}
		if u.Scheme != proto {
			return "", false, refuseBind(codeBindURL, "the URL %q does not match the bind's protocol %s", opts.URL, proto)
		}
		if p := u.Port(); p != "" && p != strconv.Itoa(e.publicPort(proto)) {
			return "", false, refuseBind(codeBindURL, "the URL %q names port %s, and this edge serves %s on port %d: leave the port out", opts.URL, p, proto, e.publicPort(proto))
		}
		host = u.Hostname()
	case opts.Hostname != "":
		host = opts.Hostname
	case opts.Domain != "":
		host = opts.Domain
	case opts.Subdomain != "":
		host = opts.Subdomain + "." + e.cfg.Domain
	default:
		return e.randomLabel(s.record.AccountID) + "." + e.cfg.Domain, true, nil
	}
	name, err := dnsname.Check(host, 0)
	if err != nil {
		return "", false, refuseBind(codeBindURL, "the endpoint's host %s", err)
	}
	// A random subdomain of the edge domain, as the edge gave this
	// account: an agent binding again after a reconnect gets it back, if
	// free.
	parent, ok := strings.CutSuffix(name, "."+e.cfg.Domain)
	return name, ok && e.gaveLabel(s.record.AccountID, parent), nil
}

// reservation returns the id of the account's reserved domain that
// covers name: the domain itself, or a wildcard over it. A name another
// account reserved is refused exactly as one nobody reserved.
func (s *session) reservation(ctx context.Context, name string) (string, error) {
	account := s.record.AccountID
	wildcard := ""
	for page := (store.Page{Limit: store.MaxPageLimit}); ; {
		domains, next, err := s.edge.cfg.Store.ListReservedDomains(ctx, account, page)
		if err != nil {
			return "", fmt.Errorf("reading the account's reserved domains: %w", err)
		}
		for _, d := range domains {
			if d.Domain == name {
				return d.ID, nil
			}
			if base, ok := strings.CutPrefix(d.Domain, "*."); ok && strings.HasSuffix(name, "."+base) && wildcard == "" {
				wildcard = d.ID
			}
		}
		if next == "" {
			break
		}
		page.BeforeID = next
	}
	if wildcard != "" {
		return wildcard, nil
	}
	return "", refuseBind(codeNotReserved, "%s is not a reserved domain of the account: reserve it, or a wildcard over it (POST /reserved_domains), or bind without a URL for a random one", name)
}

// tcpPort returns the port a TCP bind asks for, 0 for any free one.
func (s *session) tcpPort(opts tunnelwire.BindOptions) (int, error) {
	e := s.edge
	if e.cfg.TCPPorts.High == 0 {
		return 0, refuseBind(codeNoPorts, "this edge serves no TCP endpoints")
	}
	addr := opts.Addr
	if opts.URL != "" {
		u, err := url.Parse(opts.URL)
		if err != nil || u.Scheme != "tcp" {
			return 0, refuseBind(codeBindURL, "%q is no TCP endpoint URL: give tcp://<host>:<port>, or none for a free port", opts.URL)
		}
		addr = u.Host
	}
	if addr == "" {
		return 0, nil
	}
	host, p, err := net.SplitHostPort(addr)
	port, perr := strconv.Atoi(p)
	if err != nil || perr != nil {
		return 0, refuseBind(codeBindURL, "%q is no TCP address: give <host>:<port>", addr)
	}
	if !strings.EqualFold(host, e.cfg.TCPHost) || port < e.cfg.TCPPorts.Low || port > e.cfg.TCPPorts.High {
		return 0, refuseBind(codeBindURL, "%s is not an address of this edge: TCP endpoints are on %s, ports %d to %d; bind without an address for a free one",
			addr, e.cfg.TCPHost, e.cfg.TCPPorts.Low, e.cfg.TCPPorts.High)
	}
	return port, nil
}

// claim takes the endpoint's host or port in the edge's tables (and
// listens on a TCP endpoint's port); a free port is chosen for a TCP
// endpoint of port 0.
func (e *Edge) claim(ep *endpoint) error {
	if ep.proto != "tcp" {
		key := hostKey(ep.proto, ep.host)
		e.mu.Lock()
		defer e.mu.Unlock()
		if _, taken := e.hosts[key]; taken {
			return refuseBind(codeHostInUse, "%s is served by another agent session already: stop it first", ep.url)
		}
		e.hosts[key] = ep
		return nil
	}
	want := ep.port
	ports := e.cfg.TCPPorts
	n := ports.High - ports.Low + 1
	start := 0
	if want == 0 {
		r, _ := rand.Int(rand.Reader, big.NewInt(int64(n)))
		start = int(r.Int64())
	}
	for i := range n {
		port := want
		if want == 0 {
			port = ports.Low + (start+i)%n
		}
		e.mu.Lock()
		_, taken := e.ports[port]
		if !taken {
			e.ports[port] = ep
		}
		e.mu.Unlock()
		if !taken {
			ln, err := net.Listen("tcp", net.JoinHostPort(e.cfg.TCPListenHost, strconv.Itoa(port)))
			if err == nil {
				ep.port, ep.listener = port, ln
				ep.url = "tcp://" + net.JoinHostPort(e.cfg.TCPHost, strconv.Itoa(port))
				return nil
			}
			e.mu.Lock()
			delete(e.ports, port)
			e.mu.Unlock()
		}
		if want != 0 {
			return refuseBind(codePortInUse, "port %d is in use: bind without an address for a free one", want)
		}
	}
	return refuseBind(codeNoPorts, "every TCP port of this edge is in use: try again later")
}

// release gives back what claim took.
func (e *Edge) release(ep *endpoint) {
	e.mu.Lock()
	if ep.proto == store.ProtoLabeled {
		e.releaseLabeled(ep)
	} else if ep.proto == "tcp" {
		if e.ports[ep.port] == ep {
			delete(e.ports, ep.port)
		}
	} else if key := hostKey(ep.proto, ep.host); e.hosts[key] == ep {
		delete(e.hosts, key)
	}
	e.mu.Unlock()
	if ep.listener != nil {
		_ = ep.listener.Close()
	}
}

// removeEndpoint stops serving an endpoint and removes its record.
func (e *Edge) removeEndpoint(ep *endpoint) {
	e.release(ep)
	if ep.record.ID == "" {
		return
	}
	e.Metrics.endpoints.Add(-1)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if err := e.cfg.Store.DeleteEndpoint(ctx, ep.record.AccountID, ep.record.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
		e.cfg.Log.Warn("removing an endpoint's record", "endpoint", ep.record.ID, "error", err)
	}
}

// unbind serves an Unbind call.
func (s *session) unbind(id string) tunnelwire.ErrorResponse {
	s.mu.Lock()
	ep, ok := s.binds[id]
	delete(s.binds, id)
	s.mu.Unlock()
	if !ok {
		return tunnelwire.ErrorResponse{Error: fmt.Sprintf("the session has no bind %q", id)}
	}
	s.edge.removeEndpoint(ep)
	return tunnelwire.ErrorResponse{}
}

// randomLabel returns n random letters and digits.
func randomLabel(n int) string {
	b := make([]byte, n)
	max := big.NewInt(int64(len(randomAlphabet)))
	for i := range b {
		r, _ := rand.Int(rand.Reader, max)
		b[i] = randomAlphabet[r.Int64()]
	}
	return string(b)
}

// randomLabel returns a new random subdomain label for the account,
// signed for it.
func (e *Edge) randomLabel(account string) string {
	r := randomLabel(randomPart)
	return r + e.labelSign(account, r)
}

// gaveLabel reports whether label is a random subdomain label the edges
// gave the account.
func (e *Edge) gaveLabel(account, label string) bool {
	if len(label) != randomPart+signPart {
		return false
	}
	want := e.labelSign(account, label[:randomPart])
	return hmac.Equal([]byte(label[randomPart:]), []byte(want))
}

// labelSign signs the random part of a label for the account.
func (e *Edge) labelSign(account, random string) string {
	mac := hmac.New(sha256.New, e.cfg.Secret)
	mac.Write([]byte(account))
	mac.Write([]byte{0})
	mac.Write([]byte(random))
	sum := mac.Sum(nil)
	out := make([]byte, signPart)
	for i := range out {
		out[i] = randomAlphabet[int(sum[i])%len(randomAlphabet)]
	}
	return string(out)
}
