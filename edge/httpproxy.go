package edge

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.ngrok.com/muxado/v2"

	"github.com/sluicehq/sluice/edge/circuitbreaker"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/tunnelwire"
	"github.com/sluicehq/sluice/trafficpolicy"
)

// Public HTTP bounds.
const (
	// MaxHeaderBytes bounds a public request's header, its URL included.
	MaxHeaderBytes = 64 << 10
	// ReadHeaderTimeout bounds the wait for a request's header: a slow
	// client cannot hold a connection with half a header.
	ReadHeaderTimeout = 10 * time.Second
	// IdleTimeout closes a public keep-alive connection idle that long.
	IdleTimeout = 90 * time.Second
)

// More error codes, of public requests.
const (
	codeNoEndpoint  = "630"
	codeAgentGone   = "631"
	codeConnLimit   = "632"
	codeUpstreamBad = "633"
	codeMisdirected = "634"
	codeRateLimited = "635"
	codePeerRefused = "636"
	codeBadBody     = "637"
)

// publicConn is a public client's connection to an HTTP listener: its
// stream to the agent of the endpoint it last asked, kept between the
// requests of the connection as the agent's connection to its upstream
// is.
type publicConn struct {
	start   time.Time
	local   net.Addr
	mu      sync.Mutex
	backend *backendConn
	account string // the account whose connection limit counts it, once counted
}

// backendConn is a public connection's stream to an agent.
type backendConn struct {
	ep     *endpoint
	stream muxado.Stream
	br     *bufio.Reader
	used   bool
}

func (b *backendConn) close() { _ = b.stream.Close() }

type publicConnKey struct{}

// NewHTTPServer returns the server of a public listener of the scheme,
// "http" or "https", with the edge's bounds; give it a TLS configuration
// for "https".
func (e *Edge) NewHTTPServer(scheme string, tlsConfig *tls.Config) *http.Server {
	srv := &http.Server{
		Handler:           &publicHandler{edge: e, scheme: scheme},
		TLSConfig:         tlsConfig,
		MaxHeaderBytes:    MaxHeaderBytes,
		ReadHeaderTimeout: ReadHeaderTimeout,
		IdleTimeout:       IdleTimeout,
		ErrorLog:          nil,
		// HTTP/1.1 only: a public connection is one stream to the agent.
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
	}
	e.trackPublicConns(srv)
	return srv
}

// trackPublicConns gives each connection of srv a publicConn, which its
// requests find in their context, and lets go of what it held once it is
// closed or hijacked.
func (e *Edge) trackPublicConns(srv *http.Server) {
	var conns sync.Map
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		pc := &publicConn{start: e.now(), local: c.LocalAddr()}
		conns.Store(c, pc)
		return context.WithValue(ctx, publicConnKey{}, pc)
	}
	srv.ConnState = func(c net.Conn, state http.ConnState) {
		if state == http.StateClosed || state == http.StateHijacked {
			if v, ok := conns.LoadAndDelete(c); ok {
				e.releasePublicConn(v.(*publicConn), state)
			}
		}
	}
}

// releasePublicConn lets go of what a public connection held once it is
// closed or hijacked: its stream to an agent, and its account's count.
func (e *Edge) releasePublicConn(pc *publicConn, state http.ConnState) {
	pc.mu.Lock()
	if pc.backend != nil && state == http.StateClosed {
		pc.backend.close()
	}
	pc.backend = nil
	account := pc.account
	pc.account = ""
	pc.mu.Unlock()
	if account != "" {
		e.closeConn(account)
	}
}

// publicHandler proxies the requests of a public listener to the agents
// of their hosts' endpoints.
type publicHandler struct {
	edge   *Edge
	scheme string
	// forwarded is set on the peer listener's handlers: their requests
	// came from another edge, and go no further.
	forwarded bool
}

// hopHeaders are the headers of one connection, not passed on.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func (h *publicHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e := h.edge
	started := e.now()
	host := strings.ToLower(r.Host)
	if hostOnly, _, err := net.SplitHostPort(host); err == nil {
		host = hostOnly
	}
	if r.TLS != nil && r.TLS.ServerName != "" && !strings.EqualFold(r.TLS.ServerName, host) {
		e.Metrics.requests.With("4xx").Add(1)
		publicError(w, http.StatusMisdirectedRequest, codeMisdirected, fmt.Sprintf("The request is for %s, on a connection made for %s: send it on a connection to %s.", host, r.TLS.ServerName, host))
		return
	}
	ep := e.lookupHost(h.scheme, host)
	if ep == nil && !h.forwarded && e.forwarder != nil {
		if peer, account, ok := e.cfg.Peers.Find(h.scheme, host); ok {
			e.forwardCounted(w, r, peer, account, started)
			return
		}
	}
	if ep == nil {
		if er, rt := e.routing.lookup(host, r.URL.Path); er != nil {
			h.serveRoute(w, r, host, er, rt, started)
			return
		}
		e.Metrics.requests.With("4xx").Add(1)
		publicError(w, http.StatusNotFound, codeNoEndpoint, fmt.Sprintf("No endpoint is online at %s://%s. An agent must bind it first.", h.scheme, host))
		return
	}
	ex := exchange{edge: e, ep: ep, account: ep.record.AccountID, serverName: ep.host, scheme: h.scheme, req: r, start: started, connStart: started, forwarded: h.forwarded}
	pc, bc, ok := ex.admit(w)
	if !ok {
		return
	}
	if bc != nil && bc.ep != ep {
		bc.close()
		bc = nil
	}
	if ep.policy == nil {
		bc = ex.proxy(w, bc)
		ex.publish(w)
		pc.keep(bc, &ex)
		return
	}
	bc = ex.runPolicy(w, ep.policy, newPolicyRecord(ep, h.scheme), func(w http.ResponseWriter, bc *backendConn) *backendConn { return ex.proxy(w, bc) }, bc)
	pc.keep(bc, &ex)
}

// admit counts the exchange's public connection against its account's
// limit and takes its request from the account's rate; when either
// refuses it, it answers (and reports a rate-limited request) and returns
// false. It returns the public connection and the stream it kept, which
// the request holds until it ends well (publicConn.keep).
func (x *exchange) admit(w http.ResponseWriter) (*publicConn, *backendConn, bool) {
	e, r := x.edge, x.req
	pc := publicConnOf(r, x.start)
	pc.mu.Lock()
	if !e.countConn(w, pc, x.account, x.forwarded) {
		pc.mu.Unlock()
		return nil, nil, false
	}
	if !e.allowRequest(x.account) {
		pc.mu.Unlock()
		// Held on a counted connection (one request at a time: HTTP/1.1),
		// so that the account's limit of connections bounds the held. A
		// forwarded request is held by the edge that took it, on its
		// client's connection, which that edge counts (forwardCounted).
		e.Metrics.rateLimited.Add(1)
		x.status = http.StatusTooManyRequests
		if x.forwarded {
			w.Header().Set(headerRefusal, refusalRate)
		} else {
			x.held = e.holdRefusal()
		}
		w.Header().Set("Retry-After", e.retryAfter)
		publicError(w, http.StatusTooManyRequests, codeRateLimited, "The endpoint's account sends more requests a second than one edge takes. Slow down, and try again after Retry-After.")
		x.publish(w)
		return nil, nil, false
	}
	defer pc.mu.Unlock()
	bc := pc.backend
	pc.backend = nil // held by this request until it ends well
	x.connStart, x.local = pc.start, pc.local
	return pc, bc, true
}

// publicConnOf returns the public connection of r, or one of its own
// started at start when r has none.
func publicConnOf(r *http.Request, start time.Time) *publicConn {
	if pc, _ := r.Context().Value(publicConnKey{}).(*publicConn); pc != nil {
		return pc
	}
	return &publicConn{start: start}
}

// countConn counts pc, whose lock the caller holds, against the
// account's limit of public connections, unless it already counts there;
// when the limit refuses it, it answers 429, closing the connection, and
// returns false. A connection of the peer listener (forwarded) is shared
// by every account's forwarded requests and is not counted: the edge
// that took their clients' own connections counts those
// (forwardCounted).
func (e *Edge) countConn(w http.ResponseWriter, pc *publicConn, account string, forwarded bool) bool {
	if forwarded || pc.account == account {
		return true
	}
	if pc.account != "" {
		e.closeConn(pc.account)
		pc.account = ""
	}
	if !e.openConn(account) {
		e.Metrics.connLimited.Add(1)
		// Not held (the connection is not the account's to count), and
		// closed: each refusal costs the client a connection, not a
		// request on one it keeps.
		w.Header().Set("Connection", "close")
		w.Header().Set("Retry-After", "1")
		publicError(w, http.StatusTooManyRequests, codeConnLimit, "The endpoint's account has as many public connections open as it may. Try again shortly.")
		return false
	}
	pc.account = account
	return true
}

// forwardCounted forwards r to the edge at peer, which serves the
// account's endpoint, once r's public connection counts against the
// account's limit here: the connections of the account's clients are
// counted by the edge that took them, whichever edge serves them, and
// a refusal of the serving edge for the account's rate is held here on
// that counted connection (see forwarder).
func (e *Edge) forwardCounted(w http.ResponseWriter, r *http.Request, peer, account string, started time.Time) {
	pc := publicConnOf(r, started)
	pc.mu.Lock()
	counted := e.countConn(w, pc, account, false)
	pc.mu.Unlock()
	if !counted {
		return
	}
	e.Metrics.forwardedOut.Add(1)
	e.forwarder.forward(w, r, peer)
}

// holdRefusal waits Limits.RefusalHold, or until the edge ends, and
// returns how long it waited. A client that closes its connection does
// not cut it short: the connection stays counted until the hold ends, so
// that closing and opening connections gets no faster refusals.
func (e *Edge) holdRefusal() time.Duration {
	if e.cfg.Limits.RefusalHold <= 0 {
		return 0
	}
	start := time.Now()
	t := time.NewTimer(e.cfg.Limits.RefusalHold)
	defer t.Stop()
	select {
	case <-t.C:
	case <-e.ctx.Done():
	}
	return time.Since(start)
}

// runPolicy runs a traffic policy around serve, which proxies the
// request on bc: the policy may answer itself (deny, custom-response,
// rate-limit), change the answer, and log into the request's event,
// which it publishes. It returns the stream serve returned.
func (x *exchange) runPolicy(w http.ResponseWriter, policy *trafficpolicy.Policy, record *policyRecord, proxy func(http.ResponseWriter, *backendConn) *backendConn, bc *backendConn) *backendConn {
	r := x.req
	pw := &policyWriter{ResponseWriter: w}
	proxied := false
	serve := policy.Serve
	if own := x.edge.logins.ownPath(policy.OpenIDConnects(), r); own != nil {
		serve = own
	}
	serve(pw, r.WithContext(context.WithValue(r.Context(), policyRecordKey{}, record)), http.HandlerFunc(func(w http.ResponseWriter, pr *http.Request) {
		proxied = true
		x.req = pr
		bc = proxy(w, bc)
	}))
	x.req = r
	if !proxied || pw.status != 0 && pw.status != x.status {
		// The policy's answer is what the client got.
		x.status, x.respBytes, x.respHeaders = pw.status, pw.written, nil
	}
	x.policy = record
	x.publish(pw)
	return bc
}

// proxy sends the exchange's request to the endpoint's agent, on bc (the
// public connection's kept stream, or nil for a new one), and its answer
// to w. It returns the stream, for the connection's next request.
func (x *exchange) proxy(w http.ResponseWriter, bc *backendConn) *backendConn {
	for attempt := 0; ; attempt++ {
		if bc == nil {
			if bc = x.openBackend(x.scheme); bc == nil {
				x.status, x.upstreamFailed = http.StatusBadGateway, true
				publicError(w, http.StatusBadGateway, codeAgentGone, "The agent serving this endpoint could not be reached. Try again shortly.")
				return nil
			}
		}
		x.reused = bc.used
		bc.used = true
		keep, retry := x.roundTrip(w, bc, attempt == 0)
		if !retry {
			x.keep = keep
			return bc
		}
		// The kept stream had ended (the agent's upstream closed its
		// idle connection): the request goes again on a new one.
		bc.close()
		bc = nil
	}
}

// keep holds bc for the connection's next request when the exchange
// allows, and closes it otherwise.
func (pc *publicConn) keep(bc *backendConn, x *exchange) {
	if bc == nil {
		return
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if x.keep && pc.backend == nil {
		pc.backend = bc
	} else if !x.hijacked {
		bc.close()
	}
}

// openBackend opens a stream to the exchange's endpoint's agent, or
// returns nil when the agent cannot be reached. A labeled tunnel's stream
// says it comes from an HTTPS edge, and carries proto: the scheme of an
// HTTP request, or "tcp" for a converted WebSocket's bytes.
func (x *exchange) openBackend(proto string) *backendConn {
	ep := x.ep
	st, err := ep.session.mux.OpenTypedStream(muxado.StreamType(tunnelwire.CallProxy))
	if err != nil {
		return nil
	}
	h := tunnelwire.ProxyHeader{ID: ep.bindID, ClientAddr: x.req.RemoteAddr, Proto: ep.proto}
	if ep.proto == store.ProtoLabeled {
		h.Proto, h.EdgeType = proto, "https"
	}
	if err := tunnelwire.WriteProxyHeader(st, h); err != nil {
		_ = st.Close()
		return nil
	}
	return &backendConn{ep: ep, stream: st, br: bufio.NewReader(st)}
}

// publicError answers a public request the edge could not proxy, with a
// plain text body that says why.
func publicError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Sluice-Error-Code", "ERR_SLUICE_"+code)
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n\nERR_SLUICE_"+code+"\n")
}

// exchange is one public request and its response, as the event reports
// them.
type exchange struct {
	edge *Edge
	// ep is the endpoint or labeled tunnel the request went to; nil for
	// a route's request that reached none.
	ep *endpoint
	// account is whose request it is; serverName the endpoint's host, or
	// the request's at an HTTPS edge.
	account    string
	serverName string
	scheme     string
	req        *http.Request
	start      time.Time
	// held is how long the request waited before its refusal
	// (holdRefusal): the edge's own wait, not the proxy's latency.
	held time.Duration
	// forwarded is set on a request another edge forwarded: its
	// connection is the edges' own, shared by every account, so a
	// refusal is neither held on it nor closes it.
	forwarded bool
	connStart time.Time
	local     net.Addr

	reused bool
	// keep says the stream may carry the connection's next request.
	keep        bool
	status      int
	reqBytes    int64
	respBytes   int64
	respHeaders http.Header
	hijacked    bool
	// policy is what the endpoint's traffic policy did; nil without
	// one.
	policy *policyRecord
	// breaker is the route's circuit breaker's decision.
	breaker circuitbreaker.Decision
	// upstreamFailed says the agent or its upstream failed the request:
	// no stream to the agent, a broken exchange with it, or a 5xx from
	// the upstream. A client that broke off its own request does not
	// set it: what a route's breaker counts as a failure.
	upstreamFailed bool
}

// roundTrip writes the request to the agent's stream and the response
// back to w. It reports whether the stream may carry the connection's
// next request, and, when mayRetry, whether the request should go again
// on a new stream instead: a kept stream that ended before it carried
// any of a request without a body, which is then not answered.
func (x *exchange) roundTrip(w http.ResponseWriter, bc *backendConn, mayRetry bool) (keep, retry bool) {
	r := x.req
	out := r.Clone(r.Context())
	out.RequestURI = ""
	// The edge's login cookies are the edge's: no upstream gets them,
	// whatever the policy of the endpoint or route it serves.
	stripLoginCookies(out)
	out.URL.Scheme, out.URL.Host = "http", r.Host
	upgrade := ""
	if strings.EqualFold(r.Header.Get("Connection"), "upgrade") || headerHasToken(r.Header, "Connection", "upgrade") {
		upgrade = r.Header.Get("Upgrade")
	}
	for _, name := range hopHeaders {
		out.Header.Del(name)
	}
	if upgrade != "" {
		out.Header.Set("Connection", "Upgrade")
		out.Header.Set("Upgrade", upgrade)
	}
	client := hostOf(addrString(r.RemoteAddr))
	if prior := out.Header.Values("X-Forwarded-For"); len(prior) > 0 {
		client = strings.Join(prior, ", ") + ", " + client
	}
	// One array holds the three values: a request costs one allocation
	// for them rather than three.
	forwarded := [...]string{client, x.scheme, r.Host}
	out.Header["X-Forwarded-For"] = forwarded[0:1:1]
	out.Header["X-Forwarded-Proto"] = forwarded[1:2:2]
	out.Header["X-Forwarded-Host"] = forwarded[2:3:3]
	body := &countingReader{r: r.Body}
	if r.Body != nil && r.Body != http.NoBody {
		out.Body = body
	}
	// A kept stream the agent closed while idle fails at once: the
	// request may go again if nothing of its body was read.
	// A new stream the agent refused (its accept queue full) never
	// reached it: the request may go again too.
	stale := func(err error) bool {
		ended := x.reused && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || isStreamGone(err))
		return mayRetry && body.n == 0 && bc.br.Buffered() == 0 &&
			(r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0) && (ended || isStreamRefused(err))
	}
	if err := out.Write(bc.stream); err != nil {
		if stale(err) {
			return false, true
		}
		x.reqBytes = body.n
		if body.err != nil {
			x.failClient(w)
		} else {
			x.fail(w, err)
		}
		return false, false
	}
	x.reqBytes = body.n
	resp, err := http.ReadResponse(bc.br, out)
	if err != nil {
		if stale(err) {
			return false, true
		}
		if body.err != nil {
			x.failClient(w)
		} else {
			x.fail(w, err)
		}
		return false, false
	}
	defer resp.Body.Close()
	x.status = resp.StatusCode
	x.upstreamFailed = resp.StatusCode >= 500
	x.respHeaders = resp.Header
	if resp.StatusCode == http.StatusSwitchingProtocols && upgrade != "" {
		x.switchProtocols(w, bc, resp)
		return false, false
	}
	for _, name := range hopHeaders {
		resp.Header.Del(name)
	}
	// Only the edge marks its refusals for the edge that forwarded the
	// request (admit), never an agent.
	resp.Header.Del(headerRefusal)
	dropLoginSetCookies(resp.Header)
	dst := w.Header()
	for name, values := range resp.Header {
		dst[name] = values
	}
	w.WriteHeader(resp.StatusCode)
	n, err := copyFlushing(w, resp.Body, &x.edge.buffers)
	x.respBytes = n
	if err != nil {
		return false, false
	}
	return !resp.Close && !r.Close, false
}

// isStreamGone reports whether err is muxado's for a stream or session
// that closed or was reset.
func isStreamGone(err error) bool {
	switch code, _ := muxado.GetError(err); code {
	case muxado.StreamClosed, muxado.StreamReset:
		return true
	}
	return isStreamRefused(err)
}

// isStreamRefused reports whether err is muxado's for a stream the agent
// refused before accepting it: its accept queue was full, or it was going
// away.
func isStreamRefused(err error) bool {
	switch code, _ := muxado.GetError(err); code {
	case muxado.StreamRefused, muxado.AcceptQueueFull:
		return true
	}
	return false
}

// failClient answers a request whose exchange broke on the client's
// side: its body ended short, or could not be read. No upstream failure
// is counted.
func (x *exchange) failClient(w http.ResponseWriter) {
	x.status = http.StatusBadRequest
	publicError(w, http.StatusBadRequest, codeBadBody, "The request's body ended before its length, or could not be read.")
}

// fail answers a request whose exchange with the agent broke.
func (x *exchange) fail(w http.ResponseWriter, err error) {
	x.status, x.upstreamFailed = http.StatusBadGateway, true
	x.edge.Metrics.upstreamFailed.Add(1)
	msg := "The agent serving this endpoint did not answer the request."
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		msg = "The agent serving this endpoint closed the request: its upstream may be down."
	}
	publicError(w, http.StatusBadGateway, codeUpstreamBad, msg)
}

// switchProtocols joins the public connection and the agent's stream
// after a 101 answer, for WebSockets and other upgrades.
func (x *exchange) switchProtocols(w http.ResponseWriter, bc *backendConn, resp *http.Response) {
	rc := http.NewResponseController(w)
	conn, brw, err := rc.Hijack()
	if err != nil {
		x.fail(w, err)
		return
	}
	x.hijacked = true
	defer conn.Close()
	defer bc.close()
	// The hijack gave back the connection's count of the account's
	// connections: the upgraded connection counts again while it lasts.
	if !x.edge.openConn(x.account) {
		x.edge.Metrics.connLimited.Add(1)
		return
	}
	defer x.edge.closeConn(x.account)
	if err := resp.Write(conn); err != nil {
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		n, _ := io.Copy(bc.stream, brw)
		x.reqBytes += n
		_ = bc.stream.CloseWrite()
	})
	n, _ := io.Copy(conn, bc.br)
	x.respBytes += n
	if tc, ok := conn.(interface{ CloseWrite() error }); ok {
		_ = tc.CloseWrite()
	} else {
		_ = conn.Close()
	}
	wg.Wait()
}

// copyFlushing copies the response body, flushing whenever the agent
// has sent nothing more for now, so that streamed answers (server-sent
// events) reach the client as they come.
func copyFlushing(w http.ResponseWriter, body io.Reader, buffers *sync.Pool) (int64, error) {
	rc := http.NewResponseController(w)
	bp := buffers.Get().(*[]byte)
	defer buffers.Put(bp)
	buf := *bp
	var total int64
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return total, werr
			}
			total += int64(n)
			_ = rc.Flush()
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// countingReader counts what is read through it.
type countingReader struct {
	r io.ReadCloser
	n int64
	// err is the read's error other than io.EOF: the public client's
	// body ended short or could not be read.
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.r == nil {
		return 0, io.EOF
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

func (c *countingReader) Close() error {
	if c.r == nil {
		return nil
	}
	return c.r.Close()
}

// headerHasToken reports whether a comma-separated header has token.
func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for part := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(part), token) {
				return true
			}
		}
	}
	return false
}

// addrString is an address string as a net.Addr, for hostOf.
type addrString string

func (a addrString) Network() string { return "tcp" }
func (a addrString) String() string  { return string(a) }
