// Package acl checks and matches the access rules of a tunnel credential
// (specification section 2.4): what an agent holding its token may bind.
// The store checks the rules of a credential with Check; the edge asks
// Allows whether a credential may bind a domain or an address, which
// parses the target (ParseTarget) before it matches any rule.
//
// It is not the place of reserved domains: whether the account holds a
// domain is the store's question, asked beside this one.
package acl

import (
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/internal/resource"
)

// Any is the rule that permits everything, as no rule at all does.
const Any = "*"

// BindPrefix starts a bind rule: "bind:" and a domain, a domain starting
// with "*.", or a host:port address.
const BindPrefix = "bind:"

// Forms says the forms of a rule, for messages.
const Forms = `"*", "bind:<domain>" (such as bind:app.example.com), "bind:*.<domain>" (such as bind:*.example.com), "bind:<host>:<port>" (such as bind:example.com:8443) or "bind:<label>=<value>" (such as bind:edge=web, or bind:edge=* for any value)`

// labelRule is the canonical value of a label rule's "<label>=<value>":
// a label does not look like any target of ParseTarget.
const labelRule = "label "

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
	_, err := ruleValue(rule)
	return err
}

// ruleValue returns the canonical form of what a bind rule binds (see
// ParseTarget), "*" for the rule "*", or why the rule is none of the
// allowed forms.
func ruleValue(rule string) (string, error) {
	if rule == Any {
		return Any, nil
	}
	value, ok := strings.CutPrefix(rule, BindPrefix)
	if !ok {
		return "", fmt.Errorf("is not %q nor a bind rule", Any)
	}
	if value == "" {
		return "", fmt.Errorf("binds nothing")
	}
	if name, v, ok := strings.Cut(value, "="); ok {
		// The label's own rules, as a tunnel's labels are checked: a
		// rule no label can meet would allow nothing, silently.
		check := v
		if v == "*" {
			check = "any"
		}
		if err := resource.CheckLabels(map[string]string{name: check}); err != nil {
			return "", fmt.Errorf("binds the label %q, which is not <label>=<value> (or <label>=*): %w", value, err)
		}
		return labelRule + value, nil
	}
	canonical, err := parseTarget(value, true)
	if err != nil {
		return "", fmt.Errorf("binds %q, which %w", value, err)
	}
	// A wildcard covers the names under a domain of two labels or more.
	if suffix, ok := strings.CutPrefix(canonical, "*."); ok && !strings.Contains(suffix, ".") {
		return "", fmt.Errorf("has a wildcard over %q, which is not a domain of two labels or more", suffix)
	}
	return canonical, nil
}

// Allows reports whether a credential with the rules may bind target, as
// the edge decides it at every bind. The target is parsed first
// (ParseTarget): one that is neither a domain name, a wildcard domain nor
// a host:port address is a *TargetError (matching ErrInvalidTarget),
// whatever the rules, and no rule is matched. Then no rules, or the rule
// "*", allow everything; "bind:X" allows X, compared in canonical form
// (case and a final dot ignored, IPv6 addresses normalised);
// "bind:*.example.com" allows every domain name under example.com
// (a.example.com, a.b.example.com, *.example.com and *.a.example.com) but
// neither example.com nor any host:port address. Rules that Check refuses
// allow nothing.
func Allows(rules []string, target string) (bool, error) {
	t, err := ParseTarget(target)
	if err != nil {
		return false, err
	}
	if len(rules) == 0 {
		return true, nil
	}
	for _, rule := range rules {
		value, err := ruleValue(rule)
		switch {
		case err != nil:
			continue
		case value == Any, value == t:
			return true, nil
		}
		if suffix, ok := strings.CutPrefix(value, "*"); ok && !strings.Contains(t, ":") && len(t) > len(suffix) && strings.HasSuffix(t, suffix) {
			return true, nil
		}
	}
	return false, nil
}

// AllowsLabel reports whether a credential with the rules may start a
// labeled tunnel with the label name=value: no rules, "*",
// "bind:<name>=<value>" or "bind:<name>=*" allow it. Domain and address
// rules allow no label: a credential limited to names cannot take the
// traffic of the account's routes by labeling a tunnel.
func AllowsLabel(rules []string, name, value string) bool {
	if len(rules) == 0 {
		return true
	}
	for _, rule := range rules {
		v, err := ruleValue(rule)
		switch {
		case err != nil:
		case v == Any, v == labelRule+name+"="+value, v == labelRule+name+"=*":
			return true
		}
	}
	return false
}
