// Package acl checks and matches the access rules of a tunnel credential
// (specification section 2.4): what an agent holding its token may bind.
// The store checks the rules of a credential with Check; the edge asks
// Allows whether a credential may bind a domain or an address.
package acl

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/internal/dnsname"
)

// Any is the rule that permits everything, as no rule at all does.
const Any = "*"

// BindPrefix starts a bind rule: "bind:" and a domain, a domain starting
// with "*.", or a host:port address.
const BindPrefix = "bind:"

// Forms says the forms of a rule, for messages.
const Forms = `"*", "bind:<domain>" (such as bind:app.example.com), "bind:*.<domain>" (such as bind:*.example.com) or "bind:<host>:<port>" (such as bind:example.com:8443)`

// RuleError is a rule that is none of the allowed forms.
type RuleError struct {
	// Index is the rule's place in the list, from 0.
	Index int
	// Rule is the rule as given.
	Rule string
	// Reason says what is wrong with it.
	Reason string
}

// Error quotes the rule, says what is wrong with it and the allowed forms.
func (e *RuleError) Error() string {
	return fmt.Sprintf("%q %s: a rule is %s", e.Rule, e.Reason, Forms)
}

// Check returns a *RuleError for the first rule of rules that is none of
// the allowed forms (see Forms), or nil.
func Check(rules []string) error {
	for i, rule := range rules {
		if err := checkRule(rule); err != nil {
			return &RuleError{Index: i, Rule: rule, Reason: err.Error()}
		}
	}
	return nil
}

func checkRule(rule string) error {
	if rule == Any {
		return nil
	}
	value, ok := strings.CutPrefix(rule, BindPrefix)
	if !ok {
		return fmt.Errorf("is not %q nor a bind rule", Any)
	}
	if value == "" {
		return fmt.Errorf("binds nothing")
	}
	if host, port, err := net.SplitHostPort(value); err == nil {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port[0] == '0' {
			return fmt.Errorf("has port %q, not a number from 1 to 65535", port)
		}
		if net.ParseIP(host) == nil && !isDomain(host) {
			return fmt.Errorf("has host %q, neither a domain nor an IP address", host)
		}
		return nil
	}
	if suffix, ok := strings.CutPrefix(value, "*."); ok {
		// A final dot is the root, not a label: *.com. is over one label.
		if !isDomain(suffix) || !strings.Contains(strings.TrimSuffix(suffix, "."), ".") {
			return fmt.Errorf("has a wildcard over %q, which is not a domain of two labels or more", suffix)
		}
		return nil
	}
	if !isDomain(value) {
		return fmt.Errorf("binds %q, which is not a domain", value)
	}
	return nil
}

// isDomain reports whether name is a domain name of one label or more
// (see dnsname.Check), a public suffix included: a rule matches names,
// and claims none.
func isDomain(name string) bool {
	_, err := dnsname.Check(name, dnsname.OneLabel|dnsname.Pattern)
	return err == nil
}

// Allows reports whether a credential with the rules may bind target, a
// domain (such as "a.example.com" or "*.example.com") or a host:port
// address. No rules, or the rule "*", allow everything. "bind:X" allows X,
// ignoring case and a final dot; "bind:*.example.com" allows every name
// ending in ".example.com" (a.example.com, a.b.example.com and
// *.example.com) but not example.com. Rules that Check refuses allow
// nothing.
func Allows(rules []string, target string) bool {
	if len(rules) == 0 {
		return true
	}
	target = normalize(target)
	if target == "" {
		return false
	}
	for _, rule := range rules {
		if rule == Any {
			return true
		}
		if checkRule(rule) != nil {
			continue
		}
		value := normalize(strings.TrimPrefix(rule, BindPrefix))
		if value == target {
			return true
		}
		if suffix, ok := strings.CutPrefix(value, "*"); ok && strings.HasPrefix(suffix, ".") {
			if rest, ok := strings.CutSuffix(target, suffix); ok && rest != "" && !strings.HasSuffix(rest, ".") && !strings.Contains(target, ":") {
				return true
			}
		}
	}
	return false
}

// normalize lowers the case of a domain or address and drops a final dot
// of its host.
func normalize(s string) string {
	s = strings.ToLower(s)
	if host, port, err := net.SplitHostPort(s); err == nil {
		if strings.Contains(host, ":") {
			return net.JoinHostPort(host, port)
		}
		return strings.TrimSuffix(host, ".") + ":" + port
	}
	return strings.TrimSuffix(s, ".")
}
