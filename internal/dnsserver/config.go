package dnsserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// Defaults of Config.
const (
	DefaultTTL            = time.Minute
	DefaultMaxUDPSize     = 1232 // what DNS Flag Day 2020 settled on: no IP fragments
	DefaultTCPConnections = 1000
	DefaultTCPTimeout     = 2 * time.Second
	DefaultTCPIdleTimeout = 8 * time.Second
	// maxTCPQueries is how many queries one TCP connection may send
	// before the server closes it, so that with the timeouts no connection
	// lasts for long.
	maxTCPQueries = 128
)

// Config is what the server answers, besides the store's records, and its
// bounds.
type Config struct {
	// NSTargets are the service's name servers: the NS records of every
	// zone, the first the primary of their SOA. Required.
	NSTargets []string
	// Regions are the regions of the service: an agent ingress of
	// domain D has the region domain tunnel.<region>.D of each, as the
	// API shows. Required.
	Regions []string
	// ServiceDomains are the service's own domains: the server answers
	// the zone of the first, and cname.<first> and acme.<first> under it,
	// and gives no target to a reserved domain under any of them, as the
	// API does. Required.
	ServiceDomains []string
	// EdgeAddrs are the edge's public addresses: the A (IPv4) and AAAA
	// (IPv6) records of region domains, CNAME targets and the host names
	// under the first service domain. Required.
	EdgeAddrs []netip.Addr
	// Hostmaster is the mailbox of the zones' SOA, as a name (the "@"
	// a "."); default hostmaster.<first service domain>.
	Hostmaster string
	// TTL is the time to live of every record, and of negative answers
	// (the SOA's minimum); default DefaultTTL.
	TTL time.Duration
	// MaxUDPSize is the largest answer over UDP, when the query's EDNS
	// says it takes as much; a larger answer is truncated (TC), for the
	// client to ask again over TCP. Default DefaultMaxUDPSize.
	MaxUDPSize int
	// TCPConnections is how many TCP connections the server holds at
	// once; more wait to be accepted. Default DefaultTCPConnections.
	TCPConnections int
	// TCPTimeout bounds the reading of a connection's first query and
	// the writing of each answer; default DefaultTCPTimeout.
	TCPTimeout time.Duration
	// TCPIdleTimeout is how long a connection may wait between queries;
	// default DefaultTCPIdleTimeout.
	TCPIdleTimeout time.Duration
	// Logger is where the server logs; default slog.Default's handler.
	Logger *slog.Logger
}

// setDefaults fills the fields left zero, and puts every name in lower
// case with its final dot.
func (c *Config) setDefaults() {
	for _, names := range [][]string{c.NSTargets, c.Regions, c.ServiceDomains} {
		for i, n := range names {
			names[i] = strings.ToLower(strings.TrimSuffix(n, "."))
		}
	}
	for i, a := range c.EdgeAddrs {
		c.EdgeAddrs[i] = a.Unmap() // an IPv4 address written as IPv6 is an A record's
	}
	if c.Hostmaster == "" && len(c.ServiceDomains) > 0 {
		c.Hostmaster = "hostmaster." + c.ServiceDomains[0]
	}
	c.Hostmaster = dns.Fqdn(strings.ToLower(c.Hostmaster))
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
	if c.MaxUDPSize == 0 {
		c.MaxUDPSize = DefaultMaxUDPSize
	}
	if c.TCPConnections == 0 {
		c.TCPConnections = DefaultTCPConnections
	}
	if c.TCPTimeout == 0 {
		c.TCPTimeout = DefaultTCPTimeout
	}
	if c.TCPIdleTimeout == 0 {
		c.TCPIdleTimeout = DefaultTCPIdleTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Validate returns what is missing or wrong in c, once defaults are set.
func (c Config) Validate() error {
	var errs []error
	if len(c.NSTargets) == 0 {
		errs = append(errs, errors.New("no NS targets: the zones need their name servers"))
	}
	if len(c.Regions) == 0 {
		errs = append(errs, errors.New("no regions: an agent ingress's zone answers a region domain of each"))
	}
	if len(c.ServiceDomains) == 0 {
		errs = append(errs, errors.New("no service domains: the zones of CNAME and ACME challenge targets are under the first"))
	}
	if len(c.EdgeAddrs) == 0 {
		errs = append(errs, errors.New("no edge addresses: region domains and CNAME targets answer them"))
	}
	for _, a := range c.EdgeAddrs {
		if !a.IsValid() || a.Zone() != "" {
			errs = append(errs, fmt.Errorf("edge address %q is not an IPv4 or IPv6 address without a zone", a))
		}
	}
	for _, n := range append(append([]string{c.Hostmaster}, c.NSTargets...), c.ServiceDomains...) {
		if _, ok := dns.IsDomainName(n); !ok {
			errs = append(errs, fmt.Errorf("%q is not a domain name", n))
		}
	}
	if c.TTL < time.Second || c.TTL > 24*time.Hour {
		errs = append(errs, fmt.Errorf("TTL %s: give one from 1s to 24h", c.TTL))
	}
	if c.MaxUDPSize < dns.MinMsgSize || c.MaxUDPSize > dns.MaxMsgSize {
		errs = append(errs, fmt.Errorf("MaxUDPSize %d: give one from %d to %d", c.MaxUDPSize, dns.MinMsgSize, dns.MaxMsgSize))
	}
	if c.TCPConnections < 1 || c.TCPTimeout < 0 || c.TCPIdleTimeout < 0 {
		errs = append(errs, errors.New("TCPConnections must be at least 1, TCPTimeout and TCPIdleTimeout not negative"))
	}
	return errors.Join(errs...)
}
