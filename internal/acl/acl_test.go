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
		{[]string{"bind:*.example.com"}, "a.b.example.com", true},
		{[]string{"bind:*.example.com"}, "A.Example.COM.", true},
		{[]string{"bind:*.example.com"}, "example.com", false},
		{[]string{"bind:*.example.com"}, "badexample.com", false},
		{[]string{"bind:*.example.com"}, "a.example.com.evil.org", false},
		{[]string{"bind:*.example.com"}, ".example.com", false},
		{[]string{"bind:*.example.com"}, "a.example.com:443", false},
		{[]string{"bind:app.example.com"}, "app.example.com", true},
		{[]string{"bind:app.example.com"}, "APP.example.com.", true},
		{[]string{"bind:app.example.com"}, "x.app.example.com", false},
		{[]string{"bind:app.example.com"}, "*.example.com", false},
		{[]string{"bind:example.com:8443"}, "example.com:8443", true},
		{[]string{"bind:example.com:8443"}, "example.com:443", false},
		{[]string{"bind:example.com:8443"}, "example.com", false},
		{[]string{"bind:1.2.3.4:22"}, "1.2.3.4:22", true},
		{[]string{"bind:[::1]:22"}, "[::1]:22", true},
		{[]string{"bind:a.example.com"}, "", false},
		{[]string{"bind:", "nonsense"}, "example.com", false},
	} {
		if got := Allows(tc.rules, tc.target); got != tc.want {
			t.Errorf("Allows(%q, %q) = %v, want %v", tc.rules, tc.target, got, tc.want)
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
		"bind:*.com.", "bind:*.A.",
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

// FuzzAllows checks that a wildcard never allows its bare suffix nor a
// name outside it, and that Allows never panics.
func FuzzAllows(f *testing.F) {
	for _, seed := range [][2]string{{"example.com", "a.example.com"}, {"x.org", "x.org"}, {"a.b", "*.a.b"}, {"A.", "0.A"}, {"a.b.", "x.A.B"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, domain, target string) {
		rule := "bind:*." + domain
		allowed := Allows([]string{rule}, target)
		if Check([]string{rule}) != nil {
			if allowed {
				t.Fatalf("the refused rule %q allows %q", rule, target)
			}
			return
		}
		norm, suffix := normalize(target), strings.TrimSuffix(strings.ToLower(domain), ".")
		if allowed && (norm == suffix || !strings.HasSuffix(norm, "."+suffix)) {
			t.Fatalf("%q allows %q", rule, target)
		}
	})
}
