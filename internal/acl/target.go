package acl

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/internal/dnsname"
)

// ErrInvalidTarget is matched by the *TargetError of a target that is
// neither a domain name nor a host:port address.
var ErrInvalidTarget = errors.New("not a domain name nor a host:port address")

// TargetForms says the forms of a target, for messages.
const TargetForms = `a domain name (such as app.example.com), a wildcard domain (such as *.example.com) or a host:port address (such as example.com:8443, 192.0.2.1:22 or [2001:db8::1]:22)`

// TargetError is a target that ParseTarget refuses.
type TargetError struct {
	// Target is the target as given.
	Target string
	// Reason says what is wrong with it.
	Reason string
}

// Error quotes the target, says what is wrong with it and the allowed
// forms.
func (e *TargetError) Error() string {
	return fmt.Sprintf("%q %s: a target to bind is %s", e.Target, e.Reason, TargetForms)
}

// Is reports whether target is ErrInvalidTarget.
func (e *TargetError) Is(target error) bool { return target == ErrInvalidTarget }

// ParseTarget returns the canonical form of a target to bind, or a
// *TargetError (matching ErrInvalidTarget). A target is one of:
//
//   - a domain name: labels of a to z, 0 to 9 and hyphens (dnsname.Check,
//     a single label allowed), the last not all digits, in any case and
//     with or without one final dot; canonical in lower case without the
//     dot. Nothing else is part of a name: no "/", "?", "#", "@", "%",
//     space or control character.
//   - a wildcard domain: "*." and a domain name, as *.example.com; "*"
//     is nowhere else (not *.*.example.com, not a*.example.com).
//   - a host:port address: a port from 1 to 65535, written without
//     leading zeros, after a domain name (not a wildcard), an IPv4 address
//     or an IPv6 address in brackets. An IPv6 address is canonical as
//     net/netip writes it, so [0:0::1]:22 is [::1]:22; an IPv4-mapped
//     IPv6 address ([::ffff:192.0.2.1]:22) is the IPv4 address it maps
//     (192.0.2.1:22). A zone ([fe80::1%eth0]:22) is refused, and so are
//     brackets around anything but an IPv6 address.
func ParseTarget(target string) (string, error) {
	canonical, err := parseTarget(target, true)
	if err != nil {
		return "", &TargetError{Target: target, Reason: err.Error()}
	}
	return canonical, nil
}

// parseTarget returns the canonical form of a domain, of a wildcard
// domain when wildcard is set, or of a host:port address.
func parseTarget(s string, wildcard bool) (string, error) {
	if s == "" {
		return "", errors.New("is empty")
	}
	if strings.Contains(s, ":") {
		return parseAddress(s)
	}
	// A rule or target matches names and claims none: Pattern takes
	// public suffixes, whose ownership the reservations decide.
	opts := dnsname.OneLabel | dnsname.Pattern
	if wildcard {
		opts |= dnsname.Wildcard
	}
	name, err := checkDomain(s, opts)
	if err != nil {
		return "", fmt.Errorf("is not a domain name: it %w", err)
	}
	return name, nil
}

// checkDomain returns name as dnsname.Check does, refusing also a name
// whose last label is all digits (RFC 1123 2.1), such as an IP address:
// one is bound with a port.
func checkDomain(name string, opts dnsname.Option) (string, error) {
	d, err := dnsname.Check(name, opts)
	if err != nil {
		return "", err
	}
	last := d[strings.LastIndexByte(d, '.')+1:]
	if strings.Trim(last, "0123456789") == "" {
		return "", fmt.Errorf("ends with the label %q, all digits: a domain name does not, and an IP address is bound with a port, as 192.0.2.1:22", last)
	}
	return d, nil
}

// parseAddress returns the canonical form of a host:port address.
func parseAddress(s string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("is not a host:port address (an IPv6 address goes in brackets, as [2001:db8::1]:22)")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || port[0] < '1' || port[0] > '9' || strconv.Itoa(n) != port {
		return "", fmt.Errorf("has the port %q, not a number from 1 to 65535 without leading zeros", port)
	}
	if strings.HasPrefix(s, "[") {
		addr, err := netip.ParseAddr(host)
		switch {
		case err != nil || !addr.Is6():
			return "", fmt.Errorf("has %q in brackets, which is not an IPv6 address: brackets hold IPv6 addresses only", host)
		case addr.Zone() != "":
			return "", fmt.Errorf("has the zone %q: an address with a zone is not taken, write the address without it", addr.Zone())
		}
		if addr.Is4In6() {
			return netip.AddrPortFrom(addr.Unmap(), uint16(n)).String(), nil
		}
		return netip.AddrPortFrom(addr, uint16(n)).String(), nil
	}
	if addr, err := netip.ParseAddr(host); err == nil && addr.Is4() {
		return netip.AddrPortFrom(addr, uint16(n)).String(), nil
	}
	if strings.Contains(host, ":") {
		return "", fmt.Errorf("has the host %q, an IPv6 address out of brackets: write it as [%s]:%s", host, host, port)
	}
	name, err := checkDomain(host, dnsname.OneLabel|dnsname.Pattern)
	if err != nil {
		return "", fmt.Errorf("has the host %q, neither an IP address nor a domain name: it %w", host, err)
	}
	return name + ":" + port, nil
}
