package agent

import (
	"bufio"
	"bytes"
	"context"
	"crypto/subtle"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"

	"golang.ngrok.com/muxado/v2"

	"github.com/sluicehq/sluice/internal/agent/localapi"
	"github.com/sluicehq/sluice/internal/tunnelwire"
)

// Bounds of forwarding.
const (
	// upstreamDialTimeout bounds the connection to a local address.
	upstreamDialTimeout = 10 * time.Second
	// proxyHeaderTimeout bounds reading a Proxy stream's header.
	proxyHeaderTimeout = 10 * time.Second
	// readHeaderTimeout bounds a public request's header on a kept-alive
	// stream (the edge has read it whole already).
	readHeaderTimeout = 30 * time.Second
	// idleTimeout closes a public connection's stream idle that long.
	idleTimeout = 90 * time.Second
)

// proxy serves one Proxy stream of the edge: a public connection to one
// of the session's binds.
func (a *Agent) proxy(s *session, st muxado.TypedStream) {
	_ = st.SetReadDeadline(time.Now().Add(proxyHeaderTimeout))
	h, err := readProxyHeader(st)
	_ = st.SetReadDeadline(time.Time{})
	if err != nil {
		a.opts.Log.Debug("reading a proxied connection's header", "err", err)
		_ = st.Close()
		return
	}
	b, ok := s.bindOf(s.ctx, h.ID)
	if !ok {
		_ = st.Close()
		return
	}
	b.tunnel.fwd.serve(s.ctx, &publicConn{Stream: st, client: addrString(h.ClientAddr)}, h.Proto)
}

// readProxyHeader reads the header that starts a Proxy stream.
func readProxyHeader(r io.Reader) (tunnelwire.ProxyHeader, error) {
	var h tunnelwire.ProxyHeader
	var n int64
	if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
		return h, err
	}
	if n <= 0 || n > tunnelwire.MaxMessageBytes {
		return h, fmt.Errorf("a proxy header of %d bytes", n)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return h, err
	}
	return h, json.Unmarshal(buf, &h)
}

// publicConn is a Proxy stream, addressed from the public client.
type publicConn struct {
	muxado.Stream
	client    net.Addr
	closeOnce sync.Once
	onClose   func()
}

func (c *publicConn) RemoteAddr() net.Addr { return c.client }

func (c *publicConn) Close() error {
	err := c.Stream.Close()
	c.closeOnce.Do(func() {
		if c.onClose != nil {
			c.onClose()
		}
	})
	return err
}

// addrString is a net.Addr of a host:port string.
type addrString string

func (a addrString) Network() string { return "tcp" }
func (a addrString) String() string  { return string(a) }

// forwarder forwards a tunnel's public connections to its address.
type forwarder struct {
	t   *tunnel
	log *slog.Logger

	// HTTP tunnels: a server over the tunnel's streams, whose handler
	// proxies to the upstream.
	handler http.Handler
	srv     *http.Server
	ln      *streamListener
	served  chan struct{}
	dialer  net.Dialer
	// raw HTTP tunnels forward bytes as TCP ones do (nothing to inspect
	// or change): the upstream's host:port, dialed per connection.
	raw          bool
	upstreamHost string
	transport    *http.Transport
	// upstreamTLS is set for an https:// upstream, which the byte
	// streams of a labeled tunnel reach over TLS.
	upstreamTLS *tls.Config
}

func newForwarder(t *tunnel, captures Capturer, log *slog.Logger) *forwarder {
	f := &forwarder{t: t, log: log, dialer: net.Dialer{Timeout: upstreamDialTimeout}}
	if t.cfg.Proto == "tcp" {
		return f
	}
	upstream, _ := url.Parse(t.cfg.Addr) // checked by checkTunnel
	f.upstreamHost = upstream.Host
	if upstream.Port() == "" {
		f.upstreamHost = net.JoinHostPort(upstream.Hostname(), map[string]string{"http": "80", "https": "443"}[upstream.Scheme])
	}
	if upstream.Scheme == "https" {
		// Verified as the reverse proxy's transport verifies it.
		f.upstreamTLS = &tls.Config{ServerName: upstream.Hostname(), MinVersion: tls.VersionTLS12}
	}
	transport := &http.Transport{
		DialContext: f.dialer.DialContext, MaxIdleConnsPerHost: 64, IdleConnTimeout: idleTimeout,
		ForceAttemptHTTP2: false, ResponseHeaderTimeout: 0,
	}
	f.transport = transport
	rp := &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { rewrite(pr, upstream, t.cfg.HostHeader) },
		Transport:     transport,
		FlushInterval: -1,
		ErrorLog:      slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			log.Warn("the upstream did not answer a request", "name", t.cfg.Name, "addr", t.cfg.Addr, "err", err)
			upstreamFailed(w, r, t.cfg.Addr, err)
		},
	}
	var h http.Handler = rp
	if t.cfg.Inspect && captures != nil {
		h = captures.Capturing(t.cfg.Name, h)
	}
	h = timed(t.meter, h)
	if len(t.cfg.BasicAuth) > 0 {
		h = basicAuth(t.cfg.BasicAuth, h)
	}
	f.handler = h
	if !(t.cfg.Inspect && captures != nil) && len(t.cfg.BasicAuth) == 0 && t.cfg.HostHeader == "" && upstream.Scheme == "http" {
		// Nothing to do to a request on its way: its bytes are
		// forwarded as they are, as fast as TCP's. (A replay still goes
		// through the handler.)
		f.raw = true
		return f
	}
	f.ln = &streamListener{conns: make(chan net.Conn), done: make(chan struct{})}
	f.srv = &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, IdleTimeout: idleTimeout,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	f.served = make(chan struct{})
	go func() {
		defer close(f.served)
		_ = f.srv.Serve(f.ln)
	}()
	return f
}

// rewrite points a public request at the upstream: the Host stays the
// public one unless host_header says otherwise, and the edge's
// X-Forwarded headers pass on.
func rewrite(pr *httputil.ProxyRequest, upstream *url.URL, hostHeader string) {
	pr.Out.URL.Scheme = upstream.Scheme
	pr.Out.URL.Host = upstream.Host
	for _, h := range []string{"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
		if v, ok := pr.In.Header[h]; ok {
			pr.Out.Header[h] = v
		}
	}
	switch hostHeader {
	case "":
		pr.Out.Host = pr.In.Host
	case "rewrite":
		pr.Out.Host = upstream.Host
	default:
		pr.Out.Host = hostHeader
	}
}

// upstreamFailed answers a public request its upstream did not: 502,
// with a page that says the agent is up and which address failed.
func upstreamFailed(w http.ResponseWriter, r *http.Request, addr string, err error) {
	if r.Context().Err() != nil {
		return // the public client went away
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("X-Sluice-Error", "upstream")
	w.WriteHeader(http.StatusBadGateway)
	reason := "did not answer"
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		reason = "refused the connection"
	}
	_, _ = fmt.Fprintf(w, `<!doctype html><html><head><meta charset="utf-8"><title>502 Bad Gateway</title></head>
<body style="font-family:system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em">
<h1>502 Bad Gateway</h1>
<p>The tunnel's agent (sluice-agent) is up, and the upstream at <code>%s</code> %s.</p>
<p>Start the service at that address, or change the tunnel's <code>addr</code>. The agent's log has the error.</p>
</body></html>
`, html.EscapeString(addr), reason)
}

// rawUpstreamFailed answers the public connection of a raw HTTP tunnel
// whose upstream refused it: the request is read (so that the edge
// reads the answer), and answered as upstreamFailed does.
func rawUpstreamFailed(c *publicConn, addr string, err error) {
	_ = c.SetReadDeadline(time.Now().Add(readHeaderTimeout))
	br := bufio.NewReader(c)
	req, rerr := http.ReadRequest(br)
	if rerr != nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(req.Body, 1<<20))
	rec := &bufferedResponse{discardWriter: discardWriter{header: http.Header{}}}
	upstreamFailed(rec, req, addr, err)
	resp := &http.Response{StatusCode: rec.status, ProtoMajor: 1, ProtoMinor: 1, Header: rec.header,
		Body: io.NopCloser(&rec.body), ContentLength: int64(rec.body.Len()), Close: true}
	_ = c.SetWriteDeadline(time.Now().Add(readHeaderTimeout))
	_ = resp.Write(c)
}

// bufferedResponse is a ResponseWriter that keeps the answer.
type bufferedResponse struct {
	discardWriter
	body bytes.Buffer
}

func (w *bufferedResponse) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

// timed counts each request and its duration on the tunnel's meter.
func timed(m *localapi.Meter, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		next.ServeHTTP(w, r)
		m.HTTPDone(time.Since(start))
	})
}

// basicAuth lets through requests that present one of the pairs
// (user:password), and answers the others 401.
func basicAuth(pairs []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user, pass, ok := r.BasicAuth(); ok {
			given := []byte(user + ":" + pass)
			match := 0
			for _, p := range pairs {
				match |= subtle.ConstantTimeCompare(given, []byte(p))
			}
			if match == 1 {
				next.ServeHTTP(w, r)
				return
			}
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="sluice-agent", charset="UTF-8"`)
		http.Error(w, "401 Unauthorized: this tunnel asks for a user and password", http.StatusUnauthorized)
	})
}

// serve forwards one public connection, until it ends or ctx (the
// session's) does. proto is its Proxy header's: a labeled tunnel's
// streams are HTTP ("https" or "http"), or the raw bytes of a WebSocket
// that the edge's route converted ("tcp").
func (f *forwarder) serve(ctx context.Context, c *publicConn, proto string) {
	m := f.t.meter
	m.ConnOpened()
	start := time.Now()
	c.onClose = func() { m.ConnClosed(time.Since(start)) }
	if f.t.cfg.Proto == "labeled" && proto == "tcp" {
		f.serveBytes(ctx, c)
		return
	}
	if f.srv != nil {
		select {
		case f.ln.conns <- c:
		case <-f.ln.done:
			_ = c.Close()
		}
		return
	}
	defer c.Close()
	addr := f.t.cfg.Addr
	if f.raw {
		addr = f.upstreamHost
	}
	up, err := f.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		f.log.Warn("the upstream refused a connection", "name", f.t.cfg.Name, "addr", f.t.cfg.Addr, "err", err)
		if f.raw {
			rawUpstreamFailed(c, f.t.cfg.Addr, err)
		}
		return
	}
	defer up.Close()
	splice(ctx, c, up, f.raw)
}

// serveBytes splices a labeled tunnel's byte stream to its upstream, as a
// TCP tunnel's connection is: over TLS for an https:// upstream.
func (f *forwarder) serveBytes(ctx context.Context, c *publicConn) {
	defer c.Close()
	up, err := f.dialer.DialContext(ctx, "tcp", f.upstreamHost)
	if err != nil {
		f.log.Warn("the upstream refused a connection", "name", f.t.cfg.Name, "addr", f.t.cfg.Addr, "err", err)
		return
	}
	defer func() { _ = up.Close() }()
	if f.upstreamTLS != nil {
		tc := tls.Client(up, f.upstreamTLS)
		up = tc // closing it closes the connection
		if err := tc.HandshakeContext(ctx); err != nil {
			f.log.Warn("the upstream's TLS handshake failed", "name", f.t.cfg.Name, "addr", f.t.cfg.Addr, "err", err)
			return
		}
	}
	splice(ctx, c, up, false)
}

// splice copies between a public connection and its upstream until both
// directions end, or the session does (ctx). TCP passes each half-close
// on; a raw HTTP tunnel's stream closes whole when the upstream closes
// its side, so that the edge does not send the public connection's next
// request on it.
func splice(ctx context.Context, public *publicConn, up net.Conn, httpConn bool) {
	stop := context.AfterFunc(ctx, func() {
		_ = public.Close()
		_ = up.Close()
	})
	defer stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(up, public)
		if cw, ok := up.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
	}()
	_, _ = io.Copy(public, up)
	if httpConn {
		_ = public.Close()
		_ = up.Close()
	} else {
		_ = public.CloseWrite()
	}
	<-done
}

// replay serves req as if the edge had handed it over, and discards the
// answer: the capture (when the tunnel inspects) keeps it.
func (f *forwarder) replay(ctx context.Context, req *http.Request) error {
	if f.handler == nil {
		return localapi.ErrNoTunnel
	}
	w := &discardWriter{header: http.Header{}}
	f.handler.ServeHTTP(w, req.WithContext(ctx))
	return nil
}

// close stops the forwarder's server and waits for it, and closes its
// idle upstream connections.
func (f *forwarder) close() {
	if f.transport != nil {
		f.transport.CloseIdleConnections()
	}
	if f.srv == nil {
		return
	}
	f.ln.close()
	_ = f.srv.Close()
	<-f.served
}

// discardWriter is the ResponseWriter of a replay: the answer goes to
// the capture, not back anywhere.
type discardWriter struct {
	header http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.header }
func (w *discardWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}
func (w *discardWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return len(p), nil
}

// streamListener is the listener of a tunnel's HTTP server: its
// connections are the tunnel's Proxy streams.
type streamListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *streamListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *streamListener) close() { l.once.Do(func() { close(l.done) }) }

func (l *streamListener) Close() error {
	l.close()
	return nil
}

func (l *streamListener) Addr() net.Addr { return addrString("tunnel") }
