package dnsname_test

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/dnsname"
)

// TestCheck holds a name to the rules with and without its options: what
// it takes comes back lower-cased without a final dot, and what it
// refuses is refused with words naming the rule broken.
func TestCheck(t *testing.T) {
	label63 := strings.Repeat("a", 63)
	for _, c := range []struct {
		name      string
		opts      dnsname.Option
		want, err string
	}{
		{"App.Example.COM", 0, "app.example.com", ""},
		{"app.example.com.", 0, "app.example.com", ""},
		{"xn--bcher-kva.example", 0, "xn--bcher-kva.example", ""},
		{"a-b.c0", 0, "a-b.c0", ""},
		{label63 + ".com", 0, label63 + ".com", ""},
		{strings.Repeat(label63+".", 4)[:249] + ".io", 0, strings.Repeat(label63+".", 4)[:249] + ".io", ""}, // 253 bytes
		{"localhost", dnsname.OneLabel | dnsname.Pattern, "localhost", ""},
		{"*.Sub.Example.com", dnsname.Wildcard, "*.sub.example.com", ""},
		{"*.com", dnsname.Wildcard, "*.com", ""},

		{"", 0, "", "is required"},
		{"localhost", 0, "", "two labels"},
		{"*.example.com", 0, "", "is a wildcard"},
		{"*.example.com", dnsname.OneLabel, "", "is a wildcard"},
		{"a" + label63 + ".example.com", 0, "", "at most 63"},
		{strings.Repeat(label63+".", 4) + "com", 0, "", "at most 253"},
		{"*." + strings.Repeat(label63+".", 3) + strings.Repeat("a", 56) + ".com", dnsname.Wildcard, "", "at most 253"}, // 252 after "*."
		{"-a.example.com", 0, "", "hyphen"},
		{"a-.example.com", 0, "", "hyphen"},
		{"a..example.com", 0, "", "empty label"},
		{".", dnsname.OneLabel, "", "is required"},
		{"a_b.example.com", 0, "", `'_'`},
		{"bücher.example", 0, "", "punycode"},
		{"a.*.example.com", dnsname.Wildcard, "", "only as its first label"},
		{"a.*.example.com", 0, "", `'*'`},
		{"*a.example.com", dnsname.Wildcard, "", "whole first label"},
		{"**.example.com", dnsname.Wildcard, "", "whole first label"},
		{"*.*.example.com", dnsname.Wildcard, "", "only as its first label"},
	} {
		got, err := dnsname.Check(c.name, c.opts)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("Check(%q, %d) = %q, %v; want %q", c.name, c.opts, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("Check(%q, %d) = %q, %v; want an error saying %q", c.name, c.opts, got, err, c.err)
		}
	}
}

// TestCheckOwnable refuses what no account can own, as every family that
// claims a name reads it: an IP address in any form a resolver or browser
// reads as one, and a bare public suffix, of ICANN's section or the
// private one. Pattern takes them, for names that match rather than claim.
func TestCheckOwnable(t *testing.T) {
	for _, c := range []struct {
		name      string
		opts      dnsname.Option
		want, err string
	}{
		{"127.0.0.1", 0, "", "IP address"},
		{"127.0.0.1.", 0, "", "IP address"},
		{"10.1", 0, "", "IP address"},
		{"0x7f.0.0.1", 0, "", "IP address"},
		{"a.0x7F", 0, "", "IP address"},
		{"app.0177.0.0.01", 0, "", "IP address"},
		{"2130706433", dnsname.OneLabel, "", "IP address"},
		{"::1", 0, "", "IP address"},
		{"[::1]", 0, "", "IP address"},
		{"::ffff:127.0.0.1", 0, "", "IP address"},
		{"2001:db8::1", 0, "", "IP address"},
		{"*.10.0.0.1", dnsname.Wildcard, "", "IP address"},
		{"co.uk", 0, "", "public suffix"},
		{"CO.UK.", 0, "", "public suffix"},
		{"github.io", 0, "", "public suffix"},
		{"com", dnsname.OneLabel, "", "public suffix"},
		{"localhost", dnsname.OneLabel, "", "public suffix"},

		{"example.co.uk", 0, "example.co.uk", ""},
		{"user.github.io", 0, "user.github.io", ""},
		{"0x.example.com", 0, "0x.example.com", ""},
		{"1.example.com", 0, "1.example.com", ""},
		{"a.b0", 0, "a.b0", ""},
		{"*.co.uk", dnsname.Wildcard, "*.co.uk", ""}, // what a wildcard covers is the caller's
		{"co.uk", dnsname.Pattern, "co.uk", ""},
		{"localhost", dnsname.OneLabel | dnsname.Pattern, "localhost", ""},
		{"127.0.0.1", dnsname.Pattern, "127.0.0.1", ""},
	} {
		got, err := dnsname.Check(c.name, c.opts)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("Check(%q, %d) = %q, %v; want %q", c.name, c.opts, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("Check(%q, %d) = %q, %v; want an error saying %q", c.name, c.opts, got, err, c.err)
		}
	}
}
