// Package dnsname holds the one rule of a domain name that sluice's
// resources share: agent ingresses and reserved domains check their
// domain with it, and tunnel credentials the domains of their bind rules,
// so that a name one of them takes, the others take too, and each refuses
// a bad name with the same words.
package dnsname

import (
	"fmt"
	"net/netip"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// MaxLabel is the longest label of a domain name, in bytes (RFC 1035).
const MaxLabel = 63

// MaxDomain is the longest domain name, in bytes (RFC 1035).
const MaxDomain = 253

// Option widens what Check takes.
type Option uint8

const (
	// Wildcard takes "*." and a name, as in *.sub.example.com: the
	// wildcard is the whole first label, and the name after it may have a
	// single label (the caller decides what a wildcard may cover).
	Wildcard Option = 1 << iota
	// OneLabel takes a name of a single label, such as localhost; without
	// it a name must be fully qualified, of two labels or more.
	OneLabel
	// Pattern takes a name no account can own: an IP address or a bare
	// public suffix, such as a bind rule of a credential may name, which
	// matches names rather than claims one.
	Pattern
)

// Allowed says what a domain name is, for messages.
const Allowed = "labels of a to z, 0 to 9 and hyphens, not starting or ending with a hyphen, at most 63 bytes each and 253 in all, such as app.example.com (punycode, xn--, for other letters)"

// Check returns name in lower case without one final dot, or an error
// that says which rule the name breaks, worded to follow the name of the
// field that holds it ("domain has an empty label: …"). A name is labels
// of a to z, 0 to 9 and hyphens (punycode "xn--" labels for other
// letters), neither first nor last a hyphen, at most MaxLabel bytes each
// and MaxDomain in all (with any "*."), and at least two labels
// unless opts has OneLabel; with Wildcard, it may also be "*." and such
// a name.
//
// Unless opts has Pattern, it also refuses what no account can own: an IP
// address, v4 or v6, in any form a resolver or a browser reads as one
// (127.0.0.1, 127.1, 0x7f.0.0.1, [::1]: a name whose last label is a
// number), and a bare public suffix of the Public Suffix List, of its
// ICANN section or its private one (co.uk, github.io), where registrants'
// names begin. What a wildcard may cover is the caller's to decide.
func Check(name string, opts Option) (string, error) {
	d := strings.ToLower(strings.TrimSuffix(name, "."))
	if d == "" {
		return "", fmt.Errorf("is required: give a domain name of %s", Allowed)
	}
	if opts&Pattern == 0 && isAddress(d) {
		return "", fmt.Errorf("%q is an IP address, which no account can own: give a domain name, such as app.example.com", name)
	}
	if len(d) > MaxDomain {
		return "", fmt.Errorf("is %d bytes long, and a domain name may have at most %d", len(d), MaxDomain)
	}
	base, wildcard := strings.CutPrefix(d, "*.")
	if wildcard && opts&Wildcard == 0 {
		return "", fmt.Errorf("%q is a wildcard, and this field takes a single domain name, such as app.example.com", name)
	}
	labels := strings.Split(base, ".")
	if len(labels) < 2 && !wildcard && opts&OneLabel == 0 {
		return "", fmt.Errorf("%q is not a fully qualified domain name: give at least two labels, such as app.example.com", name)
	}
	for _, l := range labels {
		if err := checkLabel(l, opts); err != nil {
			return "", err
		}
	}
	if opts&Pattern == 0 && endsInNumber(labels) {
		return "", fmt.Errorf("%q ends in a number, and resolvers and browsers read such a name as an IP address, which no account can own: give a domain name, such as app.example.com", name)
	}
	if opts&Pattern == 0 && !wildcard {
		if suffix, _ := publicsuffix.PublicSuffix(d); suffix == d {
			return "", fmt.Errorf("%q is a public suffix, under which registrants' names begin, and no account can own it: give a name under it, such as example.%s", name, d)
		}
	}
	return d, nil
}

// isAddress reports whether name, lower case, is an IPv6 or IPv4 address
// as netip reads them, IPv6 also in brackets.
func isAddress(name string) bool {
	_, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(name, "["), "]"))
	return err == nil
}

// endsInNumber reports whether the last label is a number as the WHATWG
// URL standard's host parser reads one, decimal, octal or hexadecimal
// (0x…), which makes it parse the whole name as an IPv4 address: 127.1,
// 0x7f.0.0.1 and 2130706433 are 127.0.0.1 to a browser.
func endsInNumber(labels []string) bool {
	last := labels[len(labels)-1]
	if hex, ok := strings.CutPrefix(last, "0x"); ok {
		return strings.Trim(hex, "0123456789abcdef") == ""
	}
	return last != "" && strings.Trim(last, "0123456789") == ""
}

// checkLabel checks one label after any "*." of a name.
func checkLabel(l string, opts Option) error {
	switch {
	case l == "":
		return fmt.Errorf("has an empty label: labels are separated by one dot")
	case l == "*" && opts&Wildcard != 0:
		return fmt.Errorf("may have a wildcard only as its first label, exactly \"*\", as in *.sub.example.com")
	case len(l) > MaxLabel:
		return fmt.Errorf("has the label %q of %d bytes, and a label may have at most %d", l, len(l), MaxLabel)
	case l[0] == '-' || l[len(l)-1] == '-':
		return fmt.Errorf("has the label %q, which starts or ends with a hyphen: labels are a-z, 0-9 and hyphens not first or last", l)
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			if c == '*' && opts&Wildcard != 0 {
				return fmt.Errorf("may have a wildcard only as its whole first label, exactly \"*\", as in *.sub.example.com")
			}
			return fmt.Errorf("has %q in the label %q: labels are a-z, 0-9 and hyphen (write other letters in punycode, xn--)", rune(c), l)
		}
	}
	return nil
}
