package main

import (
	"errors"
	"fmt"
	"net"
	"syscall"
)

// serveListeners are serve's listeners, bound before it opens the store, so
// that an address in use stops serve before it bootstraps anything.
type serveListeners struct {
	http    net.Listener
	metrics net.Listener // nil with --metrics-http ""
	devAWS  net.Listener // nil without --dev
	// dnsUDP and dnsTCP are --dns-listen's, nil without it.
	dnsUDP net.PacketConn
	dnsTCP net.Listener
}

// listen binds --http, --metrics-http, --dns-listen when given and, with
// --dev, --dev-aws-listen, and checks that --nats-listen is free: the
// embedded NATS server binds it itself once started.
func (f serveFlags) listen() (*serveListeners, error) {
	l := &serveListeners{}
	var err error
	if l.http, err = listenFlag("--http", f.httpAddr); err != nil {
		return nil, err
	}
	if f.metricsAddr != "" {
		if l.metrics, err = listenFlag("--metrics-http", f.metricsAddr); err != nil {
			l.close()
			return nil, err
		}
	}
	if f.dev {
		if l.devAWS, err = listenFlag("--dev-aws-listen", f.devAWSListen); err != nil {
			l.close()
			return nil, err
		}
	}
	if f.dns.addr != "" {
		if l.dnsUDP, l.dnsTCP, err = f.dns.listen(); err != nil {
			l.close()
			return nil, err
		}
	}
	if f.natsListen != "" && f.natsURL == "" {
		if _, port, _ := net.SplitHostPort(f.natsListen); port != "0" {
			probe, err := listenFlag("--nats-listen", f.natsListen)
			if err != nil {
				l.close()
				return nil, err
			}
			_ = probe.Close() // only a check
		}
	}
	return l, nil
}

// listenFlag listens on addr, the value of flag, and says what to do when
// another process has the address.
func listenFlag(flag, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, fmt.Errorf("%s %s: %w: another process (another sluice serve?) listens there; stop it, or give %s another address", flag, addr, err, flag)
	case err != nil:
		return nil, fmt.Errorf("%s %s: %w", flag, addr, err)
	}
	return ln, nil
}

// close closes the listeners, for a serve that stops before serving them.
// A listener a server has closed already is closed again harmlessly.
func (l *serveListeners) close() {
	for _, ln := range []net.Listener{l.http, l.metrics, l.devAWS, l.dnsTCP} {
		if ln != nil {
			_ = ln.Close()
		}
	}
	if l.dnsUDP != nil {
		_ = l.dnsUDP.Close()
	}
}
