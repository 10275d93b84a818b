package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/edge"
	"github.com/sluicehq/sluice/internal/retry"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// Defaults of the edge's listeners with --dev, for an agent on the same
// machine.
const (
	devEdgeAgents   = "127.0.0.1:4443"
	devEdgeHTTP     = "127.0.0.1:8000"
	devEdgeHTTPS    = "127.0.0.1:8443"
	devEdgeTCPPorts = "20000-20099"
	devEdgeDomain   = "sluice.localhost"
)

// edgeFlags configure the edge role.
type edgeFlags struct {
	agents, agentsCert, agentsKey string
	http, https, tlsCert, tlsKey  string
	tcpPorts, tcpHost             string
	peer, peerAdvertise           string
	domain, region                string
	bufferEvents                  int
	requestRate                   float64
	requestBurst                  int
	maxConnections                int
	geoIP                         string
	loginPrivateIssuers           bool
}

func (f *edgeFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.agents, "edge-agents", "", "HOST:PORT of the edge's TLS listener agents connect to (default with --dev: "+devEdgeAgents+"; without, the edge role needs it)")
	fl.StringVar(&f.agentsCert, "edge-agents-cert", "", "certificate file (PEM, chain after it) of --edge-agents, with --edge-agents-key, for every name but agent ingresses' region domains with a certificate sluice obtained, served by SNI (default with --dev: one signed by the dev CA, DIR/edge/ca.pem)")
	fl.StringVar(&f.agentsKey, "edge-agents-key", "", "private key file (PEM) of --edge-agents-cert")
	fl.StringVar(&f.http, "edge-http", "", "HOST:PORT of the edge's public HTTP listener (default with --dev: "+devEdgeHTTP+"; empty for none)")
	fl.StringVar(&f.https, "edge-https", "", "HOST:PORT of the edge's public HTTPS listener, by SNI (default with --dev: "+devEdgeHTTPS+", with certificates of the dev CA; empty for none)")
	fl.StringVar(&f.tlsCert, "edge-tls-cert", "", "certificate file (PEM) --edge-https serves, with --edge-tls-key (with --dev: the dev CA makes one per name)")
	fl.StringVar(&f.tlsKey, "edge-tls-key", "", "private key file (PEM) of --edge-tls-cert")
	fl.StringVar(&f.tcpPorts, "edge-tcp-ports", "", "LOW-HIGH, the ports TCP endpoints get their address from, on the host of --edge-http (default with --dev: "+devEdgeTCPPorts+"; empty for no TCP endpoints)")
	fl.StringVar(&f.tcpHost, "edge-tcp-host", "", "the host name in TCP endpoints' addresses (default: the host of --edge-http, or tcp.<--edge-domain> when that is all addresses)")
	fl.StringVar(&f.peer, "edge-peer", "", "HOST:PORT of the edge's peer listener, where other edges forward the public HTTP and HTTPS requests of the endpoints this edge's agents serve, and from which this edge forwards those it takes for theirs: an address only the edges reach (default: none; each edge serves its own agents' endpoints alone)")
	fl.StringVar(&f.peerAdvertise, "edge-peer-advertise", "", "HOST:PORT the other edges reach --edge-peer at (default: --edge-peer, unless its host is unspecified, as 0.0.0.0)")
	fl.StringVar(&f.domain, "edge-domain", "", "the service-owned domain under which an endpoint with no domain gets a random subdomain (default with --dev: "+devEdgeDomain+")")
	fl.StringVar(&f.region, "edge-region", "us", "the region the edge reports to agents and in events")
	fl.Float64Var(&f.requestRate, "edge-account-request-rate", 1000, "public requests a second one account's endpoints may get at one edge process; past it, 429 with Retry-After (-1: unbounded)")
	fl.IntVar(&f.requestBurst, "edge-account-request-burst", 0, "public requests one account's endpoints may get at one instant at one edge process, beyond its rate (default: a tenth of --edge-account-request-rate, at least 10)")
	fl.IntVar(&f.maxConnections, "edge-account-connections", 1000, "public connections, HTTP and TCP, one account's endpoints may have open at one edge process; past it, 429 or a closed connection")
	fl.StringVar(&f.geoIP, "edge-geoip", "", "a MaxMind database file (GeoIP2 or GeoLite2 City or Country, .mmdb) that locates the browsers of openid-connect logins in their application sessions (default: none; sessions have no location)")
	fl.BoolVar(&f.loginPrivateIssuers, "edge-oidc-private-issuers", false, "let openid-connect actions use OpenID Connect providers on loopback and private addresses, which the edge otherwise refuses to reach, so that whoever binds an endpoint cannot make it request the edge's own networks (default with --dev: true)")
	fl.IntVar(&f.bufferEvents, "edge-event-buffer", edge.DefaultBufferEvents, "how many events the edge holds while NATS is away; past it, events are dropped and counted (sluice_edge_events_dropped_total)")
}

// applyDevDefaults gives the edge's listeners their --dev defaults where
// their flags were not set.
func (f *edgeFlags) applyDevDefaults(changed func(name string) bool) {
	for _, d := range []struct {
		name  string
		value *string
		def   string
	}{
		{"edge-agents", &f.agents, devEdgeAgents},
		{"edge-http", &f.http, devEdgeHTTP},
		{"edge-https", &f.https, devEdgeHTTPS},
		{"edge-tcp-ports", &f.tcpPorts, devEdgeTCPPorts},
		{"edge-domain", &f.domain, devEdgeDomain},
	} {
		if !changed(d.name) {
			*d.value = d.def
		}
	}
}

// settleEdge gives the edge's flags their --dev defaults, and adds the
// edge to the default roles where it knows where agents connect: a plain
// serve runs the edge only once told.
func (f *serveFlags) settleEdge(changed func(name string) bool) {
	if f.dev {
		f.edge.applyDevDefaults(changed)
	}
	if f.edge.agents != "" && !changed("roles") && !slices.Contains(f.roles, roleEdge) {
		f.roles = append(slices.Clone(f.roles), roleEdge)
	}
}

// validate checks the edge's flags, for a process running the edge role.
func (f edgeFlags) validate(dev bool) error {
	var errs []error
	if f.agents == "" {
		return errors.New("the edge role needs --edge-agents, the address agents connect to (with --dev it has a default); or leave edge out of --roles")
	}
	if f.domain == "" {
		errs = append(errs, errors.New("the edge role needs --edge-domain, the domain under which endpoints get random subdomains"))
	}
	if !dev && (f.agentsCert == "" || f.agentsKey == "") {
		errs = append(errs, errors.New("the edge role needs --edge-agents-cert and --edge-agents-key, the certificate agents verify (with --dev, the dev CA signs one)"))
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		errs = append(errs, errors.New("--edge-tls-cert and --edge-tls-key go together"))
	}
	if f.tcpPorts != "" {
		if _, err := edge.ParsePortRange(f.tcpPorts); err != nil {
			errs = append(errs, fmt.Errorf("--edge-tcp-ports: %w", err))
		}
	}
	if f.requestRate == 0 || f.maxConnections < 1 {
		errs = append(errs, errors.New("--edge-account-request-rate must not be 0 (-1 for unbounded), and --edge-account-connections must be at least 1"))
	}
	if f.requestBurst < 0 {
		errs = append(errs, errors.New("--edge-account-request-burst must be at least 1, or 0 for a tenth of --edge-account-request-rate"))
	}
	if f.bufferEvents < 1 {
		errs = append(errs, errors.New("--edge-event-buffer must be at least 1"))
	}
	if f.peerAdvertise != "" && f.peer == "" {
		errs = append(errs, errors.New("--edge-peer-advertise goes with --edge-peer, the peer listener it advertises"))
	}
	if f.peer != "" {
		if _, err := f.peerAddress(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// peerAddress is where the other edges reach this one's peer listener.
func (f edgeFlags) peerAddress() (string, error) {
	addr := f.peerAdvertise
	if addr == "" {
		addr = f.peer
	}
	host, port, err := net.SplitHostPort(addr)
	switch {
	case err != nil || port == "" || port == "0" && f.peerAdvertise != "":
		return "", fmt.Errorf("--edge-peer-advertise %q is not HOST:PORT: give the address other edges reach --edge-peer at", addr)
	case host == "" || net.ParseIP(host) != nil && net.ParseIP(host).IsUnspecified():
		return "", fmt.Errorf("--edge-peer %s listens on every address: give --edge-peer-advertise HOST:PORT, the address other edges reach it at", f.peer)
	}
	return addr, nil
}

// edgeListeners are the edge role's listeners.
type edgeListeners struct {
	agents, http, https net.Listener // http and https nil when not served
	peer                net.Listener // nil without --edge-peer
}

func (l *edgeListeners) close() {
	for _, ln := range []net.Listener{l.agents, l.http, l.https, l.peer} {
		if ln != nil {
			_ = ln.Close()
		}
	}
}

// listen binds the edge's listeners.
func (f edgeFlags) listen() (*edgeListeners, error) {
	l := &edgeListeners{}
	var err error
	if l.agents, err = listenFlag("--edge-agents", f.agents); err != nil {
		return nil, err
	}
	if f.http != "" {
		if l.http, err = listenFlag("--edge-http", f.http); err != nil {
			l.close()
			return nil, err
		}
	}
	if f.https != "" {
		if l.https, err = listenFlag("--edge-https", f.https); err != nil {
			l.close()
			return nil, err
		}
	}
	if f.peer != "" {
		if l.peer, err = listenFlag("--edge-peer", f.peer); err != nil {
			l.close()
			return nil, err
		}
	}
	return l, nil
}

// edgeRole is what the edge role runs: the edge, its event buffer and
// the servers of its listeners.
type edgeRole struct {
	edge      *edge.Edge
	store     *store.Store
	edgeID    string
	buffer    *edge.Buffer
	listeners *edgeListeners
	agentsTLS *tls.Config
	http      *http.Server // nil without --edge-http
	https     *http.Server // nil without --edge-https
	// peers and directory, with --edge-peer: the peer listener's server,
	// and where the edges serving other endpoints are; peer is the
	// address this edge's heartbeats advertise.
	peers     *http.Server
	directory *store.EdgeDirectory
	peer      string
	// certificates and ingressCertificates are the certificates sluice
	// obtained, kept by a watch of the store: --edge-https serves the
	// reserved domains' by SNI, --edge-agents the agent ingresses'
	// region domains'. Neither listener serves the other's.
	certificates, ingressCertificates *edge.Certificates
	// challenges are the pending ACME HTTP-01 challenges --edge-http
	// answers, kept by a watch of the store; nil without --edge-http.
	challenges *edge.HTTPChallenges
	caFile     string      // the dev CA's file, with --dev
	geoIP      *edge.GeoIP // --edge-geoip's database; nil without
	// agentConfig is the agent configuration --dev wrote at this start
	// ("" when it wrote none).
	agentConfig string
	log         *slog.Logger
}

// newEdgeRole wires the edge on the process's store and producer.
func (a *app) newEdgeRole() (*edgeRole, error) {
	f := a.flags.edge
	log := a.log.With("component", "edge")
	r := &edgeRole{listeners: a.edgeListeners, log: log, store: a.store, edgeID: "edge_" + schemas.NewID("x")[2:]}
	var ca *edge.DevCA
	if a.flags.dev {
		var err error
		dir := filepath.Join(a.flags.dataDir, "edge")
		if ca, err = edge.LoadOrCreateDevCA(dir); err != nil {
			return nil, fmt.Errorf("the edge's dev CA: %w", err)
		}
		r.caFile = filepath.Join(dir, edge.DevCAFile)
	}
	agentsCert, err := edgeCertificate(ca, f.agentsCert, f.agentsKey, agentNames(f.agents)...)
	if err != nil {
		return nil, fmt.Errorf("--edge-agents-cert: %w", err)
	}
	// An agent ingress's certificate for its region domains, by SNI,
	// else --edge-agents-cert's or the dev CA's.
	r.certificates, r.ingressCertificates = edge.NewCertificates(), edge.NewCertificates()
	r.agentsTLS = &tls.Config{Certificates: []tls.Certificate{agentsCert}, GetCertificate: r.ingressCertificates.GetCertificate(nil), MinVersion: tls.VersionTLS12}

	secretCtx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	secret, err := a.store.Edges().EdgeSecret(secretCtx)
	if err != nil {
		return nil, err
	}
	if a.flags.dev {
		r.agentConfig, err = writeDevAgentConfig(secretCtx, a.store, filepath.Dir(r.caFile), r.listeners.agents.Addr().String(), r.caFile)
		if err != nil {
			return nil, fmt.Errorf("writing the dev agent's configuration: %w", err)
		}
	}
	cfg := edge.Config{
		Store: a.store, Domain: f.domain, Region: f.region, EdgeID: r.edgeID, Secret: secret,
		Version: buildVersion(), Log: log, IngressOwner: a.store.AgentIngressOwner, Routing: a.store,
		Limits:      edge.Limits{RequestRate: f.requestRate, RequestBurst: f.requestBurst, Connections: f.maxConnections},
		AppSessions: a.store, LoginPrivateIssuers: f.loginPrivateIssuers || a.flags.dev,
	}
	if f.geoIP != "" {
		if r.geoIP, err = edge.OpenGeoIP(f.geoIP); err != nil {
			return nil, fmt.Errorf("--edge-geoip: %w", err)
		}
		cfg.GeoIP = r.geoIP
	}
	r.buffer = edge.NewBuffer(a.producer, f.bufferEvents, log)
	cfg.Events = r.buffer
	if l := r.listeners.http; l != nil {
		cfg.HTTPPort = l.Addr().(*net.TCPAddr).Port
	}
	if l := r.listeners.https; l != nil {
		cfg.HTTPSPort = l.Addr().(*net.TCPAddr).Port
	}
	if f.tcpPorts != "" {
		cfg.TCPPorts, _ = edge.ParsePortRange(f.tcpPorts)
		cfg.TCPListenHost, cfg.TCPHost = tcpHosts(f)
	}
	if r.listeners.peer != nil {
		if r.peer, err = f.peerAddress(); err != nil {
			return nil, err
		}
		if f.peerAdvertise == "" {
			r.peer = r.listeners.peer.Addr().String() // the port :0 got
		}
		r.directory = a.store.Edges().NewEdgeDirectory(r.edgeID)
		cfg.Peers = r.directory
	}
	if r.edge, err = edge.New(cfg); err != nil {
		return nil, err
	}
	if r.listeners.peer != nil {
		r.peers = r.edge.NewPeerServer()
	}
	if err := errors.Join(r.edge.Metrics.Register(a.registry), r.buffer.Register(a.registry)); err != nil {
		return nil, err
	}
	if r.listeners.http != nil {
		r.http = r.edge.NewHTTPServer("http", nil)
		r.challenges = edge.NewHTTPChallenges()
		r.http.Handler = edge.ServeHTTPChallenges(r.challenges, r.http.Handler)
	}
	if r.listeners.https != nil {
		// The reserved domains' certificates first, then --edge-tls-cert's
		// or the dev CA's.
		tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
		var fallback func(*tls.ClientHelloInfo) (*tls.Certificate, error)
		switch {
		case f.tlsCert != "":
			cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
			if err != nil {
				return nil, fmt.Errorf("--edge-tls-cert: %w", err)
			}
			tlsCfg.Certificates = []tls.Certificate{cert}
		case ca != nil:
			fallback = ca.GetCertificate(r.edge.ServesHTTPS)
		}
		tlsCfg.GetCertificate = r.certificates.GetCertificate(fallback)
		r.https = r.edge.NewHTTPServer("https", tlsCfg)
	}
	for _, srv := range []*http.Server{r.http, r.https, r.peers} {
		if srv != nil {
			srv.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelDebug)
		}
	}
	return r, nil
}

// edgeCertificate loads certFile and keyFile, or, without them, has the
// dev CA issue one for names.
func edgeCertificate(ca *edge.DevCA, certFile, keyFile string, names ...string) (tls.Certificate, error) {
	if certFile != "" {
		return tls.LoadX509KeyPair(certFile, keyFile)
	}
	if ca == nil {
		return tls.Certificate{}, errors.New("no certificate: give --edge-agents-cert and --edge-agents-key")
	}
	return ca.Issue(names...)
}

// agentNames are the names the dev certificate of --edge-agents holds:
// localhost, the loopback addresses and the listener's host.
func agentNames(addr string) []string {
	names := []string{"localhost", "127.0.0.1", "::1"}
	if host, _, err := net.SplitHostPort(addr); err == nil && host != "" && host != "127.0.0.1" && host != "localhost" && host != "::1" {
		names = append(names, host)
	}
	return names
}

// tcpHosts returns the host TCP endpoints listen on (that of
// --edge-http, or every address) and the host their addresses name.
func tcpHosts(f edgeFlags) (listen, public string) {
	if f.http != "" {
		listen, _, _ = net.SplitHostPort(f.http)
	}
	public = f.tcpHost
	if public == "" {
		public = listen
		if ip := net.ParseIP(listen); listen == "" || ip != nil && ip.IsUnspecified() {
			public = "tcp." + f.domain
		}
	}
	return listen, public
}

// challengesLoadWait bounds how long the edge's public HTTP listener waits
// for the pending ACME HTTP-01 challenges to load before it serves.
const challengesLoadWait = 5 * time.Second

// waitLoaded waits until loaded is closed, or for at most wait (then it
// logs that the listener serves without the challenges), and reports
// whether to serve: false when ctx ended first.
func waitLoaded(ctx context.Context, loaded <-chan struct{}, wait time.Duration, log *slog.Logger) bool {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-loaded:
		return true
	case <-timer.C:
		log.Warn("serving the edge's public HTTP listener before the pending ACME HTTP-01 challenges are loaded: the store has not answered", "waited", wait)
		return true
	case <-ctx.Done():
		return false
	}
}

// run serves the edge until ctx ends, then closes its sessions and
// servers, and publishes the events it still holds.
func (r *edgeRole) run(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	bufferCtx, stopBuffer := context.WithCancel(context.WithoutCancel(ctx))
	wg.Go(func() { _ = r.buffer.Run(bufferCtx) })
	wg.Go(func() { r.follow(ctx) })
	wg.Go(func() { r.followAppSessions(ctx) })
	// The first heartbeat before the first session: a session's record
	// of an edge that never beat is hidden.
	if err := r.store.Edges().HeartbeatEdge(ctx, r.edgeID, r.peer); err != nil {
		r.log.Warn("recording the edge's heartbeat", "error", err)
	}
	wg.Go(func() { r.heartbeat(ctx) })
	if r.directory != nil {
		wg.Go(func() { r.directory.Run(ctx, r.log) })
	}
	wg.Go(func() { r.followCertificates(ctx) })
	// The public HTTP listener answers requests once the pending HTTP-01
	// challenges are loaded, so that an authority's validation that comes
	// as the edge starts finds its answer rather than the endpoint;
	// meanwhile the listener, already bound, holds connections in its
	// backlog. A store that does not answer in challengesLoadWait does
	// not keep the listener closed.
	challengesLoaded := make(chan struct{})
	if r.challenges != nil {
		loaded := sync.OnceFunc(func() { close(challengesLoaded) })
		wg.Go(func() { r.store.Certificates().FollowHTTPChallenges(ctx, r.log, r.challenges.Apply, loaded) })
	} else {
		close(challengesLoaded)
	}
	wg.Go(func() {
		if err := r.edge.ServeAgents(ctx, tls.NewListener(r.listeners.agents, r.agentsTLS)); err != nil {
			errs <- fmt.Errorf("serving agents: %w", err)
		}
	})
	serve := func(srv *http.Server, ln net.Listener, tlsOn bool) {
		var err error
		if tlsOn {
			err = srv.ServeTLS(ln, "", "")
		} else {
			err = srv.Serve(ln)
		}
		if !errors.Is(err, http.ErrServerClosed) {
			errs <- fmt.Errorf("serving the edge's public listener: %w", err)
		}
	}
	if r.http != nil {
		wg.Go(func() {
			if !waitLoaded(ctx, challengesLoaded, challengesLoadWait, r.log) {
				_ = r.listeners.http.Close() // never served: Shutdown does not know it
				return
			}
			serve(r.http, r.listeners.http, false)
		})
	}
	if r.https != nil {
		wg.Go(func() { serve(r.https, r.listeners.https, true) })
	}
	if r.peers != nil {
		wg.Go(func() { serve(r.peers, r.listeners.peer, false) })
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errs:
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, srv := range []*http.Server{r.http, r.https, r.peers} {
		if srv != nil {
			_ = srv.Shutdown(shutdown)
		}
	}
	_ = r.listeners.agents.Close()
	if cerr := r.edge.Close(shutdown); cerr != nil {
		r.log.Warn("the edge's sessions did not all end in time", "error", cerr)
	}
	// The sessions' stop events are in the buffer now: it publishes what
	// it holds before it stops.
	stopBuffer()
	wg.Wait()
	if r.geoIP != nil {
		_ = r.geoIP.Close()
	}
	return err
}

// followAppSessions tells the edge of every application session that
// ends, until ctx ends, so that its user is logged out at the next
// request on every edge. Each new watch starts with the edge forgetting
// what it knew of sessions: ends between two watches are not reported.
func (r *edgeRole) followAppSessions(ctx context.Context) {
	for ctx.Err() == nil {
		ends, err := r.store.WatchAppSessionEnds(ctx)
		if err != nil {
			r.log.Warn("watching the ends of application sessions; trying again", "error", err)
			_ = retry.Sleep(ctx, time.Second)
			continue
		}
		r.edge.ForgetAppSessions()
		for end := range ends {
			r.edge.AppSessionEnded(end.AccountID, end.ID)
		}
	}
}

// follow applies the store's changes to the edge until ctx ends: what a
// deleted credential, a deactivated bot user, a deleted reservation or a
// stop request takes away ends at once.
func (r *edgeRole) follow(ctx context.Context) {
	for ctx.Err() == nil {
		changes, err := r.store.Edges().WatchEdge(ctx)
		if err != nil {
			r.log.Warn("watching the store for the edge; trying again", "error", err)
			_ = retry.Sleep(ctx, time.Second)
			continue
		}
		for ch := range changes {
			switch ch.Kind {
			case store.EdgeCredential:
				// A record that cannot be read allows nothing.
				if ch.Deleted || ch.Err != nil {
					r.edge.CredentialDeleted(ch.AccountID, ch.ID)
				}
			case store.EdgeBotUser:
				if ch.Deleted || ch.Err != nil || ch.BotUser != nil && !ch.BotUser.Active {
					r.edge.BotUserInactive(ch.AccountID, ch.ID)
				}
			case store.EdgeReservedDomain:
				if ch.Deleted || ch.Err != nil {
					r.edge.ReservedDomainGone(ch.AccountID, ch.ID)
				}
			case store.EdgeTunnelSession:
				if ch.TunnelSession != nil && ch.TunnelSession.StopRequested {
					r.edge.StopSession(ch.AccountID, ch.ID)
				}
			}
		}
	}
}

// heartbeat tells the store the edge is alive, every edgeHeartbeat, so
// that the records of its sessions and endpoints outlive it by at most
// store.EdgeTimeout if it is killed; and every third beat it removes the
// records of edges that stopped beating, any edge's, so that their
// accounts' limits free up.
func (r *edgeRole) heartbeat(ctx context.Context) {
	tick := time.NewTicker(edgeHeartbeat)
	defer tick.Stop()
	for beat := 1; ; beat++ {
		if err := r.store.Edges().HeartbeatEdge(ctx, r.edgeID, r.peer); err != nil && ctx.Err() == nil {
			r.log.Warn("recording the edge's heartbeat", "error", err)
		}
		if beat%3 == 0 {
			if n, err := r.store.Edges().RemoveDeadEdgeRecords(ctx); err != nil && ctx.Err() == nil {
				r.log.Warn("removing the records of edges that stopped", "error", err)
			} else if n > 0 {
				r.log.Info("removed the records of edges that stopped", "records", n)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// edgeHeartbeat is how often an edge tells the store it is alive.
const edgeHeartbeat = 5 * time.Second

// announce logs the edge's listeners.
func (r *edgeRole) announce(log *slog.Logger) {
	attrs := []any{"agents", r.listeners.agents.Addr().String()}
	if r.listeners.http != nil {
		attrs = append(attrs, "http", "http://"+r.listeners.http.Addr().String())
	}
	if r.listeners.https != nil {
		attrs = append(attrs, "https", "https://"+r.listeners.https.Addr().String())
	}
	if r.listeners.peer != nil {
		attrs = append(attrs, "peer", r.listeners.peer.Addr().String(), "peer_advertised", r.peer)
	}
	if r.caFile != "" {
		attrs = append(attrs, "agents_ca", r.caFile)
	}
	if r.agentConfig != "" {
		attrs = append(attrs, "agent_config", r.agentConfig)
	}
	log.Info("the edge is serving", attrs...)
}

// buildVersion is sluice's version as the build recorded it, for agents.
func buildVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "devel"
}

// followCertificates keeps the table of the certificates --edge-https
// and --edge-agents serve as the store has them, until ctx ends.
func (r *edgeRole) followCertificates(ctx context.Context) {
	r.store.Certificates().FollowTLSCertificates(ctx, r.log, func(key string, c *store.TLSCertificate) {
		// A certificate is a reserved domain's or an agent ingress's for
		// its life; one that is gone leaves whichever table held it.
		table, other := r.certificates, r.ingressCertificates
		if c != nil && c.AgentIngressID != "" {
			table, other = other, table
		}
		_ = other.Apply(key, nil) // a removal loads nothing, so it cannot fail
		if err := table.Apply(key, c); err != nil {
			r.log.Warn("not serving a TLS certificate", "key", key, "error", err)
		}
	}, func() {
		r.log.Info("serving the TLS certificates of reserved domains and agent ingresses", "reserved_domains", r.certificates.Len(), "agent_ingresses", r.ingressCertificates.Len())
	})
}
