package trafficpolicy

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"cel.dev/cel-go/cel"
	"go.yaml.in/yaml/v3"
)

// MaxDocumentBytes is the largest policy document Parse reads.
const MaxDocumentBytes = 1 << 20

// Parse loads a policy document, YAML or JSON (a JSON document is YAML):
//
//	on_http_request:
//	  - name: ingest per API key
//	    expressions: ["req.method == 'POST' && req.url.path == '/events'"]
//	    actions:
//	      - type: rate-limit
//	        config: {name: per key, algorithm: sliding_window, capacity: 100, rate: 60s, bucket_key: ["getReqHeader('Authorization')"]}
//	on_http_response: []
//
// It checks the whole document and returns a *PolicyError (matching
// ErrInvalidPolicy) listing every mistake with its path and position: an
// unknown phase, field or action type, an action in a phase it does not
// run in, an expression CEL does not compile (with its position in the
// expression) or that is not a boolean, and each rule of the actions'
// configs.
func Parse(doc []byte, opts ...Option) (*Policy, error) {
	p := newPolicy(opts)
	c := &checker{policy: p}
	if len(doc) > MaxDocumentBytes {
		c.report(node{}, fmt.Sprintf("the document is %d bytes long, past the limit of %d", len(doc), MaxDocumentBytes))
		return nil, c.err()
	}
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		c.report(node{}, "not YAML or JSON: "+strings.TrimPrefix(err.Error(), "yaml: "))
		return nil, c.err()
	}
	if root.Kind == 0 || isNull(node{n: root.Content[0]}) {
		c.report(node{}, "the document is empty: write its phases, on_http_request and on_http_response; to apply no rule, write on_http_request: []")
		return nil, c.err()
	}
	top := node{n: root.Content[0]}
	phases := c.mapping(top, PhaseOnHTTPRequest, PhaseOnHTTPResponse, PhaseOnTCPConnect)
	for _, ph := range []phase{phaseRequest, phaseResponse, phaseConnect} {
		n, ok := phases[ph.String()]
		if !ok {
			continue
		}
		env, err := newEnv(ph)
		if err != nil {
			return nil, fmt.Errorf("making the CEL environment of %s: %w", ph, err)
		}
		var rules []rule
		for _, rn := range c.list(n) {
			if r, ok := c.rule(rn, ph, env); ok {
				rules = append(rules, r)
			}
		}
		switch ph {
		case phaseRequest:
			p.request = rules
		case phaseResponse:
			p.response = rules
		default:
			p.connect = rules
		}
	}
	p.carried = nil
	if err := c.err(); err != nil {
		return nil, err
	}
	return p, nil
}

// rule checks and builds a rule of phase ph.
func (c *checker) rule(n node, ph phase, env *cel.Env) (rule, bool) {
	before := len(c.problems)
	fields := c.mapping(n, "name", "expressions", "actions")
	r := rule{name: n.path, phase: ph}
	if name, ok := fields["name"]; ok {
		if s := c.string(name); s != "" {
			r.name = s
		}
	}
	if exprs, ok := fields["expressions"]; ok {
		for _, e := range c.list(exprs) {
			src := c.string(e)
			if e.n == nil || e.n.Tag != "!!str" {
				continue // reported
			}
			prg, err := compileExpr(env, src)
			if err != nil {
				c.report(e, err.Error())
				continue
			}
			r.exprs = append(r.exprs, prg)
		}
	}
	actions, ok := fields["actions"]
	if !ok {
		c.missing(n, "actions", "a list of actions, each {type, config}")
	} else {
		list := c.list(actions)
		if len(list) == 0 && actions.n.Kind == yaml.SequenceNode {
			c.report(actions, "a rule needs at least one action")
		}
		for _, an := range list {
			if a := c.action(an, ph); a != nil {
				r.actions = append(r.actions, a)
			}
		}
	}
	return r, len(c.problems) == before
}

// action checks and builds an action of phase ph.
func (c *checker) action(n node, ph phase) action {
	fields := c.mapping(n, "type", "config")
	tn, ok := fields["type"]
	if !ok {
		c.missing(n, "type", "one of "+strings.Join(actionNames(), ", "))
		return nil
	}
	typ := c.string(tn)
	kind, ok := actionKinds[typ]
	if !ok {
		c.report(tn, fmt.Sprintf("unknown action type %q: use one of %s", typ, strings.Join(actionNames(), ", ")))
		return nil
	}
	if !slices.Contains(kind.phases, ph) {
		var names []string
		for _, k := range kind.phases {
			names = append(names, k.String())
		}
		c.report(tn, fmt.Sprintf("action %s does not run in %s: it runs in %s", typ, ph, strings.Join(names, ", ")))
		return nil
	}
	cfg, ok := fields["config"]
	if !ok {
		cfg = node{path: n.path + ".config", line: n.n.Line, column: n.n.Column}
	}
	return kind.build(c, cfg, ph)
}

// node is an element of the document with its path.
type node struct {
	n            *yaml.Node // nil when the element is absent
	path         string
	line, column int // of an absent element: its parent's
}

// at returns the element of a mapping at key, for messages.
func (n node) at(key string) node {
	child := node{path: key, line: n.line, column: n.column}
	if n.n != nil {
		child.line, child.column = n.n.Line, n.n.Column
	}
	if n.path != "" {
		child.path = n.path + "." + key
	}
	return child
}

// str returns the value of a scalar.
func (n node) str() string {
	if n.n == nil {
		return ""
	}
	return n.n.Value
}

// field is one entry of a mapping.
type field struct {
	key     string
	keyNode *yaml.Node
	value   node
}

// checker gathers the problems of a document.
type checker struct {
	policy   *Policy
	problems []Problem
}

// err returns the problems, in the order of their position.
func (c *checker) err() error {
	if len(c.problems) == 0 {
		return nil
	}
	slices.SortStableFunc(c.problems, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return &PolicyError{Problems: c.problems}
}

// report records a problem at n.
func (c *checker) report(n node, msg string) {
	p := Problem{Path: n.path, Line: n.line, Column: n.column, Msg: msg}
	if n.n != nil {
		p.Line, p.Column = n.n.Line, n.n.Column
	}
	c.problems = append(c.problems, p)
}

// missing records that the mapping n lacks key, which is required.
func (c *checker) missing(n node, key, what string) {
	c.report(n.at(key), "required: "+what)
}

// resolve follows an alias.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// isNull reports whether the element is absent or null.
func isNull(n node) bool {
	return n.n == nil || (n.n.Kind == yaml.ScalarNode && n.n.Tag == "!!null")
}

// entries returns the entries of a mapping, reporting a value that is
// not one and duplicate keys. A null is an empty mapping.
func (c *checker) entries(n node) []field {
	if isNull(n) {
		return nil
	}
	if n.n.Kind != yaml.MappingNode {
		c.report(n, "must be a mapping of names to values")
		return nil
	}
	var fields []field
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.n.Content); i += 2 {
		k, v := n.n.Content[i], resolve(n.n.Content[i+1])
		child := n.at(k.Value)
		child.n = v
		if seen[k.Value] {
			c.report(node{n: k, path: child.path}, "given twice")
			continue
		}
		seen[k.Value] = true
		fields = append(fields, field{key: k.Value, keyNode: k, value: child})
	}
	return fields
}

// mapping returns the fields of a mapping by name, reporting names that
// are not allowed.
func (c *checker) mapping(n node, allowed ...string) map[string]node {
	fields := map[string]node{}
	for _, f := range c.entries(n) {
		if !slices.Contains(allowed, f.key) {
			what := "field"
			if n.path == "" {
				what = "phase"
			}
			c.report(node{n: f.keyNode, path: f.value.path}, fmt.Sprintf("unknown %s %q: use %s", what, f.key, strings.Join(allowed, ", ")))
			continue
		}
		fields[f.key] = f.value
	}
	return fields
}

// list returns the elements of a sequence. A null is an empty list.
func (c *checker) list(n node) []node {
	if isNull(n) {
		return nil
	}
	if n.n.Kind != yaml.SequenceNode {
		c.report(n, "must be a list")
		return nil
	}
	elems := make([]node, len(n.n.Content))
	for i, e := range n.n.Content {
		elems[i] = node{n: resolve(e), path: n.path + "[" + strconv.Itoa(i) + "]"}
	}
	return elems
}

// string returns the value of a string.
func (c *checker) string(n node) string {
	if n.n == nil || n.n.Kind != yaml.ScalarNode || n.n.Tag != "!!str" {
		c.report(n, "must be a string")
		return ""
	}
	return n.n.Value
}

// intIn returns the value of an integer from lo to hi.
func (c *checker) intIn(n node, lo, hi int64, what string) int {
	var v int64
	if n.n == nil || n.n.Kind != yaml.ScalarNode || n.n.Tag != "!!int" || n.n.Decode(&v) != nil || v < lo || v > hi {
		c.report(n, fmt.Sprintf("must be %s: an integer from %d to %d, not %s", what, lo, hi, describe(n)))
		return int(lo)
	}
	return int(v)
}

// stringMap returns the entries of a mapping of strings.
func (c *checker) stringMap(n node) []field {
	var fields []field
	for _, f := range c.entries(n) {
		c.string(f.value)
		fields = append(fields, f)
	}
	return fields
}

// describe shows an element in a message.
func describe(n node) string {
	switch {
	case n.n == nil:
		return "nothing"
	case n.n.Kind == yaml.ScalarNode && n.n.Tag == "!!str":
		return strconv.Quote(n.n.Value)
	case n.n.Kind == yaml.ScalarNode:
		return n.n.Value
	case n.n.Kind == yaml.SequenceNode:
		return "a list"
	case n.n.Kind == yaml.MappingNode:
		return "a mapping"
	}
	return "something else"
}
