package agentconfig

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// text returns the text of the scalar n, of any tag but null; it refuses
// a list or a mapping. what names the value for the message.
func (d *decoder) text(n *yaml.Node, key, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.fail(n, key, "must be %s, not a %s", what, kindName(n))
		return "", false
	}
	return n.Value, true
}

// oneOf returns n's text when it is one of allowed.
func (d *decoder) oneOf(n *yaml.Node, key string, allowed ...string) (string, bool) {
	s, ok := d.text(n, key, "one of "+strings.Join(allowed, ", "))
	if ok && !slices.Contains(allowed, s) {
		d.fail(n, key, "%q is not allowed; allowed: %s", s, strings.Join(allowed, ", "))
		return "", false
	}
	return s, ok
}

// boolean returns n's value when it is true or false.
func (d *decoder) boolean(n *yaml.Node, key string) (bool, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		d.fail(n, key, "must be true or false")
		return false, false
	}
	b, err := strconv.ParseBool(strings.ToLower(n.Value))
	if err != nil {
		d.fail(n, key, "must be true or false")
		return false, false
	}
	return b, true
}

// isFalse reports whether n is the boolean false (or the string "false").
func isFalse(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && strings.EqualFold(n.Value, "false") && (n.ShortTag() == "!!bool" || n.ShortTag() == "!!str")
}

// list returns the scalars of the sequence n, at most limit of them;
// each is refused with its own position unless it is a scalar.
func (d *decoder) list(n *yaml.Node, key, what string, limit int) ([]*yaml.Node, bool) {
	if n.Kind != yaml.SequenceNode {
		d.fail(n, key, "must be a list of %s, not a %s", what, kindName(n))
		return nil, false
	}
	if len(n.Content) > limit {
		d.fail(n, key, "has %d entries, and at most %d are allowed", len(n.Content), limit)
		return nil, false
	}
	ok := true
	for i, c := range n.Content {
		if c.Kind != yaml.ScalarNode || isNull(c) {
			d.fail(c, fmt.Sprintf("%s[%d]", key, i), "must be %s, not a %s", what, kindName(c))
			ok = false
		}
	}
	return n.Content, ok
}

// limited returns n's text when it is at most limit bytes long.
func (d *decoder) limited(n *yaml.Node, key string, limit int) (string, bool) {
	s, ok := d.text(n, key, fmt.Sprintf("a string of at most %d bytes", limit))
	if ok && len(s) > limit {
		d.fail(n, key, "is %d bytes long, and at most %d are allowed", len(s), limit)
		return "", false
	}
	return s, ok
}

// kindName names n's kind for a message.
func kindName(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.SequenceNode:
		return "list"
	case n.Kind == yaml.MappingNode:
		return "mapping"
	case isNull(n):
		return "empty value"
	case n.ShortTag() == "!!bool":
		return "boolean"
	case n.ShortTag() == "!!int" || n.ShortTag() == "!!float":
		return "number"
	}
	return "string"
}

// splitHostPort splits host:port, checking that the port is 1 to 65535
// and that neither part holds a space or a control character; an empty
// host is allowed (the caller decides).
func splitHostPort(s string) (host, port string, err error) {
	host, port, err = net.SplitHostPort(s)
	if err != nil {
		return "", "", fmt.Errorf("%q is not host:port", s)
	}
	if err := checkPort(port); err != nil {
		return "", "", fmt.Errorf("%q: %w", s, err)
	}
	if strings.ContainsFunc(host, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || r == '/' || r == '@' }) {
		return "", "", fmt.Errorf("%q has a host that is not a name or an address", s)
	}
	return host, port, nil
}

// checkPort checks that p is a port number, 1 to 65535.
func checkPort(p string) error {
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 || strings.HasPrefix(p, "+") {
		return fmt.Errorf("port %q is not a number from 1 to 65535", p)
	}
	return nil
}

// isPort reports whether s is only digits, as a port number is.
func isPort(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
