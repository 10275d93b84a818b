package dnsserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"time"

	"github.com/miekg/dns"
	"golang.org/x/net/netutil"
	"golang.org/x/sync/errgroup"

	"github.com/sluicehq/sluice/internal/store"
)

// shutdownTimeout bounds how long Run waits, once its ctx ends, for the
// queries in flight.
const shutdownTimeout = 5 * time.Second

// Records is the store as the server reads it: a watch of the records it
// answers from (store.Store.FollowDNS).
type Records interface {
	FollowDNS(ctx context.Context, log *slog.Logger, apply func(store.DNSChange), ready func())
}

// Server is the authoritative DNS server of sluice's zones (see the
// package's doc). Make it with New and serve with Run.
type Server struct {
	cfg     Config
	records Records
	view    *view
	udp     net.PacketConn
	tcp     net.Listener
}

// New returns the server that answers, on udp and tcp (bound to the same
// address, as resolvers ask over TCP where UDP was truncated), from the
// records of the store and cfg. It serves nothing until Run; Run closes
// both. It returns an error saying what is wrong with cfg.
func New(records Records, udp net.PacketConn, tcp net.Listener, cfg Config) (*Server, error) {
	cfg.NSTargets = slices.Clone(cfg.NSTargets)
	cfg.Regions = slices.Clone(cfg.Regions)
	cfg.ServiceDomains = slices.Clone(cfg.ServiceDomains)
	cfg.EdgeAddrs = slices.Clone(cfg.EdgeAddrs)
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("DNS server: %w", err)
	}
	s := &Server{cfg: cfg, records: records, udp: udp, tcp: tcp}
	s.view = newView(&s.cfg)
	for _, ns := range cfg.NSTargets {
		if dns.IsSubDomain(dns.Fqdn(cfg.ServiceDomains[0]), dns.Fqdn(ns)) {
			cfg.Logger.Warn("a name server is named under the service domain, whose zone this server answers with no address for it: if the service domain is delegated here, resolvers find that name server by its glue only; name the name servers outside the service domain (docs/operations.md, DNS)",
				"name_server", ns, "service_domain", cfg.ServiceDomains[0])
		}
	}
	return s, nil
}

// Run follows the store's records and serves UDP and TCP until ctx ends,
// then lets the queries in flight finish for a few seconds. Until the
// store's records are in, every query in the zones gets SERVFAIL. It
// returns the error of a listener that failed.
func (s *Server) Run(ctx context.Context) error {
	log := s.cfg.Logger
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		s.records.FollowDNS(gctx, log, s.view.apply, s.view.setReady)
		return nil
	})
	udp := &dns.Server{PacketConn: s.udp, Handler: s, UDPSize: dns.DefaultMsgSize}
	tcp := &dns.Server{
		Listener:      netutil.LimitListener(writeDeadlineListener{s.tcp, s.cfg.TCPTimeout}, s.cfg.TCPConnections),
		Handler:       s,
		ReadTimeout:   s.cfg.TCPTimeout,
		IdleTimeout:   func() time.Duration { return s.cfg.TCPIdleTimeout },
		MaxTCPQueries: maxTCPQueries,
	}
	for _, srv := range []*dns.Server{udp, tcp} {
		g.Go(func() error { return serve(gctx, srv) })
	}
	return g.Wait()
}

// serve runs srv until ctx ends, then shuts it down within
// shutdownTimeout.
func serve(ctx context.Context, srv *dns.Server) error {
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	served := make(chan error, 1)
	go func() { served <- srv.ActivateAndServe() }()
	select {
	case err := <-served:
		return fmt.Errorf("serving DNS: %w", err)
	case <-ctx.Done():
	}
	select {
	case err := <-served: // it failed as it started
		return fmt.Errorf("serving DNS: %w", err)
	case <-started:
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err := srv.ShutdownContext(shutdownCtx)
	if serveErr := <-served; serveErr != nil {
		err = errors.Join(err, serveErr)
	}
	if err != nil {
		return fmt.Errorf("shutting down DNS: %w", err)
	}
	return nil
}

// ServeDNS answers one query: the view's answer, with EDNS when the query
// has it (BADVERS for a version past 0; NOTIMP for another opcode), truncated to what the client
// takes over UDP (TC set, for it to ask over TCP).
func (s *Server) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	size := dns.MaxMsgSize
	_, overUDP := w.RemoteAddr().(*net.UDPAddr)
	if overUDP {
		size = dns.MinMsgSize
	}
	opt := req.IsEdns0()
	var resp *dns.Msg
	switch {
	case req.Opcode != dns.OpcodeQuery: // NOTIFY, which miekg/dns lets through
		resp = new(dns.Msg)
		resp.SetRcode(req, dns.RcodeNotImplemented)
	case opt != nil && opt.Version() != 0:
		resp = new(dns.Msg)
		resp.SetRcode(req, dns.RcodeBadVers)
	default:
		resp = s.view.answer(req)
	}
	if opt != nil {
		resp.SetEdns0(uint16(s.cfg.MaxUDPSize), false)
		if overUDP {
			size = min(max(int(opt.UDPSize()), dns.MinMsgSize), s.cfg.MaxUDPSize)
		}
	}
	resp.Truncate(size)
	_ = w.WriteMsg(resp) // a client gone: nothing to do
}

// writeDeadlineListener gives each write of the connections it accepts a
// deadline timeout from its start, so that a client that does not read
// its answers cannot hold a connection (the DNS server bounds reads
// itself).
type writeDeadlineListener struct {
	net.Listener
	timeout time.Duration
}

func (l writeDeadlineListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return writeDeadlineConn{c, l.timeout}, nil
}

type writeDeadlineConn struct {
	net.Conn
	timeout time.Duration
}

func (c writeDeadlineConn) Write(p []byte) (int, error) {
	if err := c.SetWriteDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}
