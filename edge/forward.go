package edge

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Peers finds the edge process serving an endpoint this one does not, so
// that a public request that reached this edge is forwarded there: behind
// a load balancer, the public traffic of an endpoint reaches every edge,
// and its agent is connected to one.
type Peers interface {
	// Find returns the peer address (HOST:PORT) of the edge, other than
	// this one, whose agent serves the endpoint of the scheme ("http" or
	// "https") at host, and the endpoint's account; false when none is
	// known.
	Find(scheme, host string) (peer, accountID string, ok bool)
	// FindLabeled returns the peer address of the edge, other than this
	// one, serving a labeled tunnel of the account whose labels selects,
	// and false when none is known.
	FindLabeled(accountID string, selects func(labels map[string]string) bool) (peer string, ok bool)
}

// HeaderForwarded carries a forwarded request's public connection from
// the edge that took it to the edge that serves its endpoint: its fields
// (scheme, client, local, tls, sn, at), then sig, an HMAC-SHA256 of them,
// the request's host and method, with a key derived from Config.Secret,
// which every edge shares. The serving edge refuses a request without a
// good one (a stranger reaching the peer listener cannot pass for a
// client address), and strips it before the agent sees the request.
const HeaderForwarded = "Sluice-Edge-Forwarded"

// headerRefusal marks the answer of a forwarded request that the serving
// edge refused for its account's rate (refusalRate), so that the edge
// that took the request holds it (Limits.RefusalHold) on its client's
// connection before it answers, as it holds its own refusals. That edge
// strips it from every answer. An agent that sets it on its own answer
// only has its own account's clients held.
const (
	headerRefusal = "Sluice-Edge-Refusal"
	refusalRate   = "rate"
)

// maxRefusalBody bounds the body of a refusal read before it is held:
// the edge's error bodies are far smaller.
const maxRefusalBody = 16 << 10

// forwardedMaxAge bounds how old a forwarded request's signature may be.
const forwardedMaxAge = time.Minute

// forwardedConn is the public connection of a forwarded request, as the
// edge that took it saw it.
type forwardedConn struct {
	scheme, client, local, serverName string
	tlsVersion, cipherSuite           uint16
	at                                time.Time
}

// peerKey derives the key that signs forwarded requests from the edges'
// shared secret, apart from the one of random subdomains.
func peerKey(secret []byte) []byte {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("sluice edge forwarding"))
	return mac.Sum(nil)
}

func (f forwardedConn) fields() string {
	return url.Values{
		"scheme": {f.scheme}, "client": {f.client}, "local": {f.local}, "sn": {f.serverName},
		"tls": {strconv.Itoa(int(f.tlsVersion)) + "/" + strconv.Itoa(int(f.cipherSuite))},
		"at":  {strconv.FormatInt(f.at.Unix(), 10)},
	}.Encode()
}

func signForwarded(key []byte, fields, host, method string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(fields + "\n" + strings.ToLower(host) + "\n" + method))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// header is the value of HeaderForwarded for a request to host.
func (f forwardedConn) header(key []byte, host, method string) string {
	fields := f.fields()
	return fields + "&sig=" + signForwarded(key, fields, host, method)
}

// parseForwarded checks the HeaderForwarded of a request and returns its
// connection.
func parseForwarded(key []byte, r *http.Request, now time.Time) (forwardedConn, error) {
	values := r.Header.Values(HeaderForwarded)
	if len(values) != 1 {
		return forwardedConn{}, errors.New("not one forwarding header")
	}
	fields, sig, ok := strings.Cut(values[0], "&sig=")
	want := signForwarded(key, fields, r.Host, r.Method)
	if !ok || !hmac.Equal([]byte(sig), []byte(want)) {
		return forwardedConn{}, errors.New("bad signature")
	}
	v, err := url.ParseQuery(fields)
	if err != nil {
		return forwardedConn{}, err
	}
	at, err := strconv.ParseInt(v.Get("at"), 10, 64)
	if err != nil || now.Sub(time.Unix(at, 0)).Abs() > forwardedMaxAge {
		return forwardedConn{}, errors.New("too old")
	}
	f := forwardedConn{scheme: v.Get("scheme"), client: v.Get("client"), local: v.Get("local"), serverName: v.Get("sn"), at: time.Unix(at, 0)}
	if f.scheme != "http" && f.scheme != "https" {
		return forwardedConn{}, errors.New("bad scheme")
	}
	version, suite, _ := strings.Cut(v.Get("tls"), "/")
	tv, err1 := strconv.ParseUint(version, 10, 16)
	cs, err2 := strconv.ParseUint(suite, 10, 16)
	if err1 != nil || err2 != nil {
		return forwardedConn{}, errors.New("bad tls")
	}
	f.tlsVersion, f.cipherSuite = uint16(tv), uint16(cs)
	return f, nil
}

// forwarder sends public requests to the edges serving their endpoints.
type forwarder struct {
	proxy *httputil.ReverseProxy
	// transport is closed with the edge.
	transport *http.Transport
}

type peerCtxKey struct{}

func newForwarder(e *Edge) *forwarder {
	key := peerKey(e.cfg.Secret)
	transport := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     IdleTimeout,
		ForceAttemptHTTP2:   false,
	}
	f := &forwarder{transport: transport}
	f.proxy = &httputil.ReverseProxy{
		Transport: transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			peer, _ := pr.In.Context().Value(peerCtxKey{}).(string)
			pr.Out.URL.Scheme, pr.Out.URL.Host = "http", peer
			pr.Out.Host = pr.In.Host
			// Rewrite drops the hop-by-hop headers and X-Forwarded-*;
			// the serving edge adds what the agent gets.
			pr.Out.Header.Del(HeaderForwarded)
			pr.Out.Header.Set(HeaderForwarded, forwardedOf(pr.In, e.now()).header(key, pr.In.Host, pr.In.Method))
		},
		ModifyResponse: func(resp *http.Response) error {
			refused := resp.Header.Get(headerRefusal) == refusalRate && resp.StatusCode == http.StatusTooManyRequests
			resp.Header.Del(headerRefusal)
			if !refused {
				return nil
			}
			// Read the refusal whole, freeing the connection to the
			// peer, then hold it. An answer longer than the edge's
			// refusals is an agent's, marked by the agent: passed on
			// whole, at once.
			body, err := io.ReadAll(io.LimitReader(resp.Body, maxRefusalBody+1))
			if err != nil {
				_ = resp.Body.Close()
				return err
			}
			if len(body) > maxRefusalBody {
				resp.Body = struct {
					io.Reader
					io.Closer
				}{io.MultiReader(bytes.NewReader(body), resp.Body), resp.Body}
				return nil
			}
			_ = resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(body))
			e.Metrics.forwardedHeld.Add(1)
			e.holdRefusal()
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			e.Metrics.forwardFailed.Add(1)
			e.cfg.Log.Warn("forwarding a public request to the edge serving its endpoint failed", "host", r.Host, "error", err)
			publicError(w, http.StatusBadGateway, codeAgentGone, "The agent serving this endpoint could not be reached. Try again shortly.")
		},
		FlushInterval: -1,
	}
	return f
}

// forwardedOf is the public connection of r as this edge took it.
func forwardedOf(r *http.Request, now time.Time) forwardedConn {
	f := forwardedConn{scheme: "http", client: r.RemoteAddr, at: now}
	if pc, _ := r.Context().Value(publicConnKey{}).(*publicConn); pc != nil && pc.local != nil {
		f.local = pc.local.String()
	}
	if r.TLS != nil {
		f.scheme, f.serverName, f.tlsVersion, f.cipherSuite = "https", r.TLS.ServerName, r.TLS.Version, r.TLS.CipherSuite
	}
	return f
}

// forward sends r to the edge at peer, which serves its endpoint.
func (f *forwarder) forward(w http.ResponseWriter, r *http.Request, peer string) {
	f.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), peerCtxKey{}, peer)))
}

// NewPeerServer returns the server of the edge's peer listener, where the
// other edges forward the public requests of the endpoints this edge's
// agents serve (Config.Peers). It answers only requests signed by an edge
// (HeaderForwarded), as the public listener that took them would, and
// forwards none further. Serve it on an address only the edges reach.
func (e *Edge) NewPeerServer() *http.Server {
	key := peerKey(e.cfg.Secret)
	handlers := map[string]*publicHandler{
		"http":  {edge: e, scheme: "http", forwarded: true},
		"https": {edge: e, scheme: "https", forwarded: true},
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fc, err := parseForwarded(key, r, e.now())
			if err != nil {
				e.Metrics.forwardRefused.Add(1)
				publicError(w, http.StatusForbidden, codePeerRefused, "This listener takes only the requests other edges forward.")
				return
			}
			r.Header.Del(HeaderForwarded)
			r.RemoteAddr = fc.client
			if fc.scheme == "https" {
				r.TLS = &tls.ConnectionState{Version: fc.tlsVersion, CipherSuite: fc.cipherSuite, ServerName: fc.serverName, HandshakeComplete: true}
			} else {
				r.TLS = nil
			}
			if pc, _ := r.Context().Value(publicConnKey{}).(*publicConn); pc != nil && fc.local != "" {
				// The connection's requests are served one at a time.
				pc.local = addrString(fc.local)
			}
			e.Metrics.forwardedIn.Add(1)
			handlers[fc.scheme].ServeHTTP(w, r)
		}),
		MaxHeaderBytes:    MaxHeaderBytes + 4<<10,
		ReadHeaderTimeout: ReadHeaderTimeout,
		IdleTimeout:       IdleTimeout,
	}
	e.trackPublicConns(srv)
	return srv
}
