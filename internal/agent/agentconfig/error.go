package agentconfig

import (
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/internal/editdistance"

	"go.yaml.in/yaml/v3"
)

// Error is one thing wrong with a configuration: where it is, which key,
// and what is wrong and allowed. Load and DecodeTunnelJSON return one or
// several of them (joined with errors.Join); find them with errors.As.
type Error struct {
	// File is the file the value is in ("" for the local API's JSON).
	File string
	// Line and Column are where the value is in File, from 1 (0 when
	// unknown, as for JSON).
	Line, Column int
	// Key is the key's path, such as tunnels.web.addr ("" for the whole
	// file or body).
	Key string
	// Msg says what is wrong and what is allowed.
	Msg string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
		}
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// decoder turns a merged tree of YAML nodes into a Config or a Tunnel,
// collecting an Error for each value it refuses.
type decoder struct {
	// file is the file each node came from; nil for JSON.
	file map[*yaml.Node]string
	errs []error
}

// fail records that the value of key at n is wrong.
func (d *decoder) fail(n *yaml.Node, key, format string, args ...any) {
	e := &Error{Key: key, Msg: fmt.Sprintf(format, args...)}
	if n != nil && d.file != nil {
		e.File, e.Line, e.Column = d.file[n], n.Line, n.Column
	}
	d.errs = append(d.errs, e)
}

// unknownKey records a key that is none of allowed, suggesting the
// closest when it looks like a typo of one.
func (d *decoder) unknownKey(n *yaml.Node, parent, key string, allowed []string) {
	msg := fmt.Sprintf("unknown key %q", key)
	if near := closest(key, allowed); near != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	d.fail(n, parent, "%s; allowed: %s", msg, strings.Join(allowed, ", "))
}

// join returns the key path of child under parent.
func join(parent, child string) string {
	if parent == "" {
		return child
	}
	return parent + "." + child
}

// closest returns the one of names within an edit distance of 2 of key
// (1 for keys of 4 bytes or fewer), or "".
func closest(key string, names []string) string {
	best, bestDist := "", 3
	if len(key) <= 4 {
		bestDist = 2
	}
	for _, n := range names {
		if d := editdistance.Levenshtein(strings.ToLower(key), n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}
