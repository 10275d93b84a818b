package acl

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestAllows(t *testing.T) {
	for _, tc := range []struct {
		rules  []string
		target string
		want   bool
	}{
		{nil, "example.com", true},
		{[]string{}, "anything:80", true},
		{[]string{"*"}, "example.com", true},
		{[]string{"bind:a.example.com", "*"}, "other.org", true},
		{[]string{"bind:*.example.com"}, "a.example.com", true},
		{[]string{"bind:*.example.com"}, "*.example.com", true},
		{[]string{"bind:*.example.com"}, "*.a.example.com", true},
		{[]string{"bind:*.example.com"}, "a.b.example.com", true},
		{[]string{"bind:*.example.com"}, "A.Example.COM.", true},
		{[]string{"bind:*.Example.COM."}, "a.example.com", true},
		{[]string{"bind:*.example.com"}, "example.com", false},
		{[]string{"bind:*.example.com"}, "badexample.com", false},
		{[]string{"bind:*.example.com"}, "a.example.com.evil.org", false},
		{[]string{"bind:*.example.com"}, "a.example.com:443", false},
		{[]string{"bind:*.example.com"}, "*.com", false},
		{[]string{"bind:app.example.com"}, "app.example.com", true},
		{[]string{"bind:app.example.com"}, "APP.example.com.", true},
		{[]string{"bind:app.example.com"}, "x.app.example.com", false},
		{[]string{"bind:app.example.com"}, "*.example.com", false},
		{[]string{"bind:example.com:8443"}, "example.com:8443", true},
		{[]string{"bind:example.com:8443"}, "EXAMPLE.com.:8443", true},
		{[]string{"bind:example.com:8443"}, "example.com:443", false},
		{[]string{"bind:example.com:8443"}, "example.com", false},
		{[]string{"bind:1.2.3.4:22"}, "1.2.3.4:22", true},
		{[]string{"bind:1.2.3.4:22"}, "[::ffff:1.2.3.4]:22", true},
		{[]string{"bind:[::ffff:102:304]:22"}, "1.2.3.4:22", true},
		{[]string{"bind:1.2.3.4:22"}, "1.2.3.5:22", false},
		{[]string{"bind:[::1]:22"}, "[::1]:22", true},
		{[]string{"bind:[::1]:22"}, "[0:0::1]:22", true},
		{[]string{"bind:[::1]:22"}, "[0000:0000:0000:0000:0000:0000:0000:0001]:22", true},
		{[]string{"bind:[0:0::1]:22"}, "[::1]:22", true},
		{[]string{"bind:[2001:DB8::1]:443"}, "[2001:db8:0::1]:443", true},
		{[]string{"bind:[::1]:22"}, "[::2]:22", false},
		{[]string{"bind:", "nonsense", "bind:*.com"}, "example.com", false},
		{[]string{"bind:[10.0.0.1]:22"}, "10.0.0.1:22", false},
	} {
		got, err := Allows(tc.rules, tc.target)
		if got != tc.want || err != nil {
			t.Errorf("Allows(%q, %q) = %v, %v; want %v, nil", tc.rules, tc.target, got, err, tc.want)
		}
	}
}

// TestAllowsRefusesTargets checks that a target that is neither a domain
// name nor a host:port address is an error, whatever the rules: those of
// issue 23, which bind:*.example.com allowed, among them.
func TestAllowsRefusesTargets(t *testing.T) {
	for target, reason := range map[string]string{
		"":                                "is empty",
		"evil.com/.example.com":           `'/'`,
		"evil.com#.example.com":           `'#'`,
		"EVIL.COM@.example.com":           `'@'`,
		"evil.com?.example.com":           `'?'`,
		"%2e.example.com":                 `'%'`,
		"\t":                              `'\t'`,
		"a\t.example.com":                 `'\t'`,
		"a\x00.example.com":               `'\x00'`,
		"a .example.com":                  `' '`,
		" a.example.com":                  `' '`,
		"a.example.com\n":                 `'\n'`,
		"\u00e9.example.com":              "in the label",
		"*.*.example.com":                 "wildcard only as its first label",
		"a*.example.com":                  "wildcard only as its whole first label",
		"*":                               "wildcard only",
		".example.com":                    "empty label",
		"a..example.com":                  "empty label",
		"example.com..":                   "empty label",
		"-a.example.com":                  "hyphen",
		"1.2.3.4":                         "all digits",
		"a.example.123":                   "all digits",
		"a.example.com:":                  "port",
		"a.example.com:0":                 "port",
		"a.example.com:022":               "port",
		"a.example.com:+22":               "port",
		"a.example.com:65536":             "port",
		"a.example.com:http":              "port",
		"*.example.com:443":               "wildcard",
		"::1":                             "host:port",
		"[::1]":                           "host:port",
		"::1:22":                          "host:port",
		"[fe80::1%eth0]:22":               "zone",
		"[1.2.3.4]:22":                    "brackets hold IPv6 addresses only",
		"[a.example.com]:22":              "brackets hold IPv6 addresses only",
		"1.2.3.04:22":                     "all digits",
		"evil.com/.example.com:22":        `'/'`,
		"user@a.example.com:22":           `'@'`,
		"a.example.com:22:22":             "host:port",
		strings.Repeat("a.", 127) + "com": "bytes long",
	} {
		for _, rules := range [][]string{nil, {"*"}, {"bind:*.example.com"}} {
			ok, err := Allows(rules, target)
			if ok || !errors.Is(err, ErrInvalidTarget) {
				t.Errorf("Allows(%q, %q) = %v, %v; want an ErrInvalidTarget", rules, target, ok, err)
				continue
			}
			var te *TargetError
			if !errors.As(err, &te) || te.Target != target || !strings.Contains(err.Error(), reason) || !strings.Contains(err.Error(), "host:port address") {
				t.Errorf("Allows(%q, %q): %v; want a *TargetError saying %s and the forms of a target", rules, target, err, reason)
			}
		}
	}
}

func TestParseTarget(t *testing.T) {
	for target, want := range map[string]string{
		"App.Example.COM.":          "app.example.com",
		"localhost":                 "localhost",
		"*.Example.com":             "*.example.com",
		"xn--bcher-kva.example":     "xn--bcher-kva.example",
		"Example.com.:8443":         "example.com:8443",
		"localhost:1":               "localhost:1",
		"192.0.2.1:65535":           "192.0.2.1:65535",
		"[0:0::1]:22":               "[::1]:22",
		"[2001:DB8:0:0:0:0:0:1]:22": "[2001:db8::1]:22",
		"[::ffff:192.0.2.1]:22":     "192.0.2.1:22",
		"[::ffff:c000:201]:22":      "192.0.2.1:22",
		"[::192.0.2.1]:22":          "[::c000:201]:22",
		"[fe80::1]:22":              "[fe80::1]:22",
	} {
		got, err := ParseTarget(target)
		if got != want || err != nil {
			t.Errorf("ParseTarget(%q) = %q, %v; want %q", target, got, err, want)
		}
		if again, err := ParseTarget(got); again != got || err != nil {
			t.Errorf("ParseTarget(%q), of a canonical form, = %q, %v", got, again, err)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, ok := range [][]string{
		nil, {"*"}, {"bind:example.com"}, {"bind:*.example.com"}, {"bind:example.com:443"},
		{"bind:1.2.3.4:80"}, {"bind:[2001:db8::1]:443"}, {"bind:xn--bcher-kva.example", "*"},
	} {
		if err := Check(ok); err != nil {
			t.Errorf("Check(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{
		"", "**", "bind", "bind:", "connect:example.com", "bind:*", "bind:*.com", "bind:a.*.example.com",
		"bind:-a.example.com", "bind:exa mple.com", "bind:example.com:0", "bind:example.com:65536",
		"bind:example.com:http", "bind:" + strings.Repeat("a", 64) + ".com", "bind:example..com", " *",
		"bind:*.com.", "bind:*.A.", "bind:10.0.0.1", "bind:[10.0.0.1]:22", "bind:[fe80::1%eth0]:22", "bind:*.*.example.com",
		"bind:evil.com/.example.com", "bind:example.com:022", "bind:*.example.com:443",
	} {
		err := Check([]string{"*", bad})
		if err == nil {
			t.Errorf("Check(%q) = nil, want an error", bad)
			continue
		}
		var rule *RuleError
		if !errors.As(err, &rule) || rule.Index != 1 || rule.Rule != bad || !strings.Contains(err.Error(), fmt.Sprintf("%q", bad)) || !strings.Contains(err.Error(), "bind:*.<domain>") {
			t.Errorf("Check(%q) = %v: want a *RuleError of rule 1 quoting it and saying the allowed forms", bad, err)
		}
	}
}

// FuzzAllows checks Allows against what a wildcard rule means: it never
// allows a target that ParseTarget refuses (nor returns an error for one
// it takes), nor its bare suffix, nor a name outside it, nor an address;
// what it allows is made of LDH labels, with "*" only as a whole first
// label; a canonical target is its own canonical form; and Allows never
// panics.
func FuzzAllows(f *testing.F) {
	for _, seed := range [][2]string{
		{"example.com", "a.example.com"}, {"x.org", "x.org"}, {"a.b", "*.a.b"}, {"A.", "0.A"}, {"a.b.", "x.A.B"},
		{"example.com", "evil.com/.example.com"}, {"example.com", "evil.com#.example.com"},
		{"example.com", "EVIL.COM@.example.com"}, {"example.com", "evil.com?.example.com"}, {"example.com", "\t"},
		{"example.com", "*.*.example.com"}, {"example.com", "%2e.example.com"}, {"example.com", "a\t.example.com"},
		{"example.com", "[0:0::1]:22"}, {"example.com", "[::ffff:1.2.3.4]:22"}, {"example.com", "[fe80::1%eth0]:22"},
		{"example.com", "a.example.com:443"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, domain, target string) {
		rule := "bind:*." + domain
		allowed, err := Allows([]string{rule}, target)
		canonical, perr := ParseTarget(target)
		if (err == nil) != (perr == nil) || allowed && err != nil {
			t.Fatalf("Allows(%q, %q) = %v, %v, and ParseTarget = %q, %v", rule, target, allowed, err, canonical, perr)
		}
		if perr == nil {
			if again, err := ParseTarget(canonical); again != canonical || err != nil {
				t.Fatalf("ParseTarget(%q) = %q, and of that %q, %v", target, canonical, again, err)
			}
		}
		if !allowed {
			return
		}
		if Check([]string{rule}) != nil {
			t.Fatalf("the refused rule %q allows %q", rule, target)
		}
		suffix := strings.TrimSuffix(strings.ToLower(domain), ".")
		if canonical == suffix || !strings.HasSuffix(canonical, "."+suffix) || canonical != strings.TrimSuffix(strings.ToLower(target), ".") {
			t.Fatalf("%q allows %q", rule, target)
		}
		for i, label := range strings.Split(canonical, ".") {
			if label == "*" && i == 0 {
				continue
			}
			if label == "" || strings.Trim(label, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
				t.Fatalf("%q allows %q, whose label %q is not a to z, 0 to 9 and hyphens", rule, target, label)
			}
		}
	})
}

// TestAllowsLabel: label rules allow their label, or any value of it with
// =*; domain rules allow no label; a malformed label rule is refused by
// Check and allows nothing; a label rule allows no domain.
func TestAllowsLabel(t *testing.T) {
	for _, tc := range []struct {
		rules       []string
		name, value string
		want        bool
	}{
		{nil, "edge", "web", true},
		{[]string{"*"}, "edge", "web", true},
		{[]string{"bind:edge=web"}, "edge", "web", true},
		{[]string{"bind:edge=web"}, "edge", "api", false},
		{[]string{"bind:edge=web"}, "team", "web", false},
		{[]string{"bind:edge=*"}, "edge", "anything", true},
		{[]string{"bind:*.example.com"}, "edge", "web", false},
		{[]string{"bind:app.example.com", "bind:team=a"}, "team", "a", true},
		{[]string{"bind:edge="}, "edge", "", false},
		{[]string{"bind:=web"}, "", "web", false},
	} {
		if got := AllowsLabel(tc.rules, tc.name, tc.value); got != tc.want {
			t.Errorf("AllowsLabel(%q, %s=%s) = %v, want %v", tc.rules, tc.name, tc.value, got, tc.want)
		}
	}
	if !AllowsLabel([]string{"bind:key=a=b"}, "key", "a=b") {
		t.Error("a label whose value has = is not allowed by its rule")
	}
	for _, rule := range []string{"bind:edge=", "bind:=web", "bind:Edge=web", "bind:a b=c", "bind:a=b c"} {
		if err := Check([]string{rule}); err == nil {
			t.Errorf("Check(%q) passed", rule)
		}
	}
	if err := Check([]string{"bind:edge=web", "bind:edge=*"}); err != nil {
		t.Errorf("Check of label rules: %v", err)
	}
	if ok, _ := Allows([]string{"bind:edge=web"}, "web"); ok {
		t.Error("a label rule allows a domain")
	}
}
