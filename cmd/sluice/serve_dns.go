package main

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/internal/dnsserver"
)

// devDNSEdgeAddr is the edge's address DNS answers with --dev: its
// listeners are on the loopback.
const devDNSEdgeAddr = "127.0.0.1"

// dnsFlags configure the authoritative DNS server, off unless --dns-listen
// is given, --dev included: a fixed port would clash between the serve
// --dev processes of one machine, and resolvers answer names under
// .localhost, --dev's domain, themselves.
type dnsFlags struct {
	addr      string
	edgeAddrs []string
}

func (f *dnsFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.addr, "dns-listen", "", "HOST:PORT, over UDP and TCP, of the authoritative DNS server of agent ingresses' domains (delegated by NS records to --ingress-ns-targets) of cname.<first service domain> and acme.<first service domain>, the zones of reserved domains' CNAME and ACME challenge targets, and of the first service domain around them (its host names at --dns-edge-addrs, for an operator who delegates it): such as 0.0.0.0:53 (docs/operations.md; default: none, with --dev too)")
	fl.StringSliceVar(&f.edgeAddrs, "dns-edge-addrs", nil, "the edge's public IP addresses, comma-separated, which the DNS server of --dns-listen answers for region domains (tunnel.<region>.<domain>), CNAME targets and the host names under the first service domain (default with --dev: "+devDNSEdgeAddr+"; without, --dns-listen needs them)")
}

// validate returns what is wrong with the DNS flags, each with what to do.
func (f dnsFlags) validate(dev bool) error {
	if f.addr == "" {
		if len(f.edgeAddrs) > 0 {
			return errors.New("--dns-edge-addrs are what the DNS server of --dns-listen answers: give --dns-listen too, or drop --dns-edge-addrs")
		}
		return nil
	}
	var errs []error
	if _, _, err := net.SplitHostPort(f.addr); err != nil {
		errs = append(errs, fmt.Errorf("--dns-listen %q is not HOST:PORT: give the address the DNS server answers on, such as 0.0.0.0:53", f.addr))
	}
	if len(f.edgeAddrs) == 0 && !dev {
		errs = append(errs, errors.New("--dns-listen needs --dns-edge-addrs, the edge's public IP addresses that region domains and CNAME targets resolve to"))
	}
	for _, a := range f.edgeAddrs {
		if addr, err := netip.ParseAddr(a); err != nil || addr.Zone() != "" {
			errs = append(errs, fmt.Errorf("--dns-edge-addrs %q is not an IPv4 or IPv6 address: give the edge's public addresses, such as 203.0.113.10,2001:db8::10", a))
		}
	}
	return errors.Join(errs...)
}

// addrs returns the edge's addresses of --dns-edge-addrs, or with --dev
// and none given, the loopback's; validate has checked them.
func (f dnsFlags) addrs(dev bool) []netip.Addr {
	values := f.edgeAddrs
	if len(values) == 0 && dev {
		values = []string{devDNSEdgeAddr}
	}
	addrs := make([]netip.Addr, 0, len(values))
	for _, v := range values {
		if a, err := netip.ParseAddr(v); err == nil {
			addrs = append(addrs, a)
		}
	}
	return addrs
}

// listen binds --dns-listen over UDP and TCP, and says what to do when
// another process has the address.
func (f dnsFlags) listen() (net.PacketConn, net.Listener, error) {
	udp, tcp, err := dnsserver.Listen(f.addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, nil, fmt.Errorf("--dns-listen %s: %w: another process (a resolver such as systemd-resolved on port 53, or another sluice serve?) listens there; stop it, or give --dns-listen another address", f.addr, err)
	case errors.Is(err, syscall.EACCES):
		return nil, nil, fmt.Errorf("--dns-listen %s: %w: a port below 1024 needs the capability CAP_NET_BIND_SERVICE (setcap cap_net_bind_service=+ep on the binary, or AmbientCapabilities in its systemd unit)", f.addr, err)
	case err != nil:
		return nil, nil, fmt.Errorf("--dns-listen %s: %w", f.addr, err)
	}
	return udp, tcp, nil
}
