package emulator

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// jsonPattern is a JSON filter pattern of FilterLogEvents, as CloudWatch
// Logs documents them for JSON log events: { EXPRESSION }, where an
// expression is a condition on a selector ($.a.b, $.a[0]), or expressions
// joined by && and || (&& binds tighter) and grouped in parentheses.
// A condition is
//
//	SELECTOR = VALUE, SELECTOR != VALUE    a string (quoted, or a bare word; * matches any run of characters) or a number
//	SELECTOR < NUMBER (also >, <=, >=)     numeric comparison
//	SELECTOR IS NULL                       the field is JSON null
//	SELECTOR NOT EXISTS                    the field is absent
//	SELECTOR IS TRUE, SELECTOR IS FALSE    the field is that boolean
//
// A string matches string fields and a number number fields only; every
// condition but NOT EXISTS needs its field present. A message that is not
// JSON matches no JSON pattern.
type jsonPattern struct {
	root jsonExpr
}

// jsonExpr is a node of a JSON pattern, evaluated against a decoded
// message.
type jsonExpr interface {
	eval(doc any) bool
}

// jsonAnd holds when all its operands do. It is flat, a && b && c one
// node of three, so that eval recurses only as deep as the parentheses
// nest, which the parser bounds (maxJSONPatternDepth).
type jsonAnd []jsonExpr

func (e jsonAnd) eval(doc any) bool {
	for _, operand := range e {
		if !operand.eval(doc) {
			return false
		}
	}
	return true
}

// jsonOr holds when one of its operands does; flat like jsonAnd.
type jsonOr []jsonExpr

func (e jsonOr) eval(doc any) bool {
	for _, operand := range e {
		if operand.eval(doc) {
			return true
		}
	}
	return false
}

// jsonStep is one step of a selector: a member name, or an array index
// when index >= 0.
type jsonStep struct {
	name  string
	index int
}

// jsonCondition is one condition on a selector.
type jsonCondition struct {
	path []jsonStep
	// op is =, !=, <, >, <=, >=, or one of the tests below.
	op string
	// The value compared with: a string glob or a number.
	isNumber bool
	number   float64
	glob     string
}

// The tests of a jsonCondition's op that take no value.
const (
	opIsNull    = "IS NULL"
	opNotExists = "NOT EXISTS"
	opIsTrue    = "IS TRUE"
	opIsFalse   = "IS FALSE"
)

func (c jsonCondition) eval(doc any) bool {
	v, ok := selectJSON(doc, c.path)
	if c.op == opNotExists {
		return !ok
	}
	if !ok {
		return false
	}
	switch c.op {
	case opIsNull:
		return v == nil
	case opIsTrue, opIsFalse:
		b, isBool := v.(bool)
		return isBool && b == (c.op == opIsTrue)
	case "=", "!=":
		return c.equal(v) == (c.op == "=")
	}
	n, isNumber := v.(json.Number)
	if !isNumber {
		return false
	}
	f, err := n.Float64()
	if err != nil {
		return false
	}
	switch c.op {
	case "<":
		return f < c.number
	case ">":
		return f > c.number
	case "<=":
		return f <= c.number
	default: // ">="
		return f >= c.number
	}
}

// equal reports whether v equals the condition's value: a number equal to
// its number, or a string its glob matches.
func (c jsonCondition) equal(v any) bool {
	if c.isNumber {
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		f, err := n.Float64()
		return err == nil && f == c.number
	}
	s, ok := v.(string)
	return ok && globMatch(c.glob, s)
}

// selectJSON follows path from doc, and reports whether it leads to a
// value (null included).
func selectJSON(doc any, path []jsonStep) (any, bool) {
	v := doc
	for _, step := range path {
		if step.index >= 0 {
			a, ok := v.([]any)
			if !ok || step.index >= len(a) {
				return nil, false
			}
			v = a[step.index]
			continue
		}
		o, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = o[step.name]; !ok {
			return nil, false
		}
	}
	return v, true
}

// globMatch reports whether s matches pattern, in which * matches any run
// of characters (none included) and every other character itself.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, part := range parts[1 : len(parts)-1] {
		i := strings.Index(s, part)
		if i < 0 {
			return false
		}
		s = s[i+len(part):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}

// matches reports whether message is JSON that satisfies the pattern.
func (p *jsonPattern) matches(message string) bool {
	dec := json.NewDecoder(strings.NewReader(message))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil || dec.More() {
		return false
	}
	return p.root.eval(doc)
}

// parseJSONPattern parses a JSON filter pattern, { ... } included. Its
// errors are InvalidParameterException saying what is wrong, and where.
func parseJSONPattern(pattern string) (*jsonPattern, error) {
	p := &jsonPatternParser{pattern: pattern}
	body := strings.TrimSpace(pattern)
	if !strings.HasSuffix(body, "}") {
		return nil, p.fail("a JSON pattern ends with }")
	}
	p.base = strings.Index(pattern, "{") + 1
	p.src = body[1 : len(body)-1]
	if err := p.next(); err != nil {
		return nil, err
	}
	if p.tok.kind == tokEnd {
		return nil, p.fail("the JSON pattern is empty: write a condition such as { $.event_type = \"http_request_complete.v0\" }")
	}
	root, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tokEnd {
		return nil, p.fail(fmt.Sprintf("unexpected %s at offset %d: join conditions with && or ||", p.tok, p.tok.offset))
	}
	return &jsonPattern{root: root}, nil
}

// The kinds of tokens of a JSON pattern.
const (
	tokEnd = iota
	tokOpen
	tokClose
	tokAnd
	tokOr
	tokOperator // = != < > <= >=
	tokSelector
	tokString // quoted
	tokWord   // a bare value or keyword
)

type jsonToken struct {
	kind   int
	text   string
	offset int
}

func (t jsonToken) String() string {
	if t.kind == tokEnd {
		return "end of pattern"
	}
	return strconv.Quote(t.text)
}

// maxJSONPatternDepth is how deep parentheses may nest in a JSON pattern:
// the parser and eval recurse once per level, so that no pattern can
// exhaust the stack.
const maxJSONPatternDepth = 32

// jsonPatternParser is a recursive-descent parser of the inside of a
// JSON pattern, one token ahead.
type jsonPatternParser struct {
	pattern string // the whole pattern, for errors
	src     string // inside the braces
	base    int    // the offset of src in pattern
	pos     int
	tok     jsonToken
	depth   int // of the parentheses open
}

func (p *jsonPatternParser) fail(what string) error {
	return invalidParameter(ServiceLogs, "Invalid filter pattern %q: %s.", p.pattern, what)
}

// parseOr parses and-expressions joined by ||.
func (p *jsonPatternParser) parseOr() (jsonExpr, error) {
	return p.parseJoined(tokOr, p.parseAnd, func(operands []jsonExpr) jsonExpr { return jsonOr(operands) })
}

// parseAnd parses primaries joined by &&.
func (p *jsonPatternParser) parseAnd() (jsonExpr, error) {
	return p.parseJoined(tokAnd, p.parsePrimary, func(operands []jsonExpr) jsonExpr { return jsonAnd(operands) })
}

// parseJoined parses operands, each by parseOperand, joined by tokens of
// kind op. One operand is returned as is; two or more become one flat node
// of them all, which join makes.
func (p *jsonPatternParser) parseJoined(op int, parseOperand func() (jsonExpr, error), join func([]jsonExpr) jsonExpr) (jsonExpr, error) {
	first, err := parseOperand()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != op {
		return first, nil
	}
	operands := []jsonExpr{first}
	for p.tok.kind == op {
		if err := p.next(); err != nil {
			return nil, err
		}
		next, err := parseOperand()
		if err != nil {
			return nil, err
		}
		operands = append(operands, next)
	}
	return join(operands), nil
}

// parsePrimary parses ( expression ) or a condition.
func (p *jsonPatternParser) parsePrimary() (jsonExpr, error) {
	switch p.tok.kind {
	case tokOpen:
		open := p.tok.offset
		if p.depth == maxJSONPatternDepth {
			return nil, p.fail(fmt.Sprintf("the ( at offset %d nests parentheses deeper than %d levels, the most the emulator takes: write the expression with fewer", open, maxJSONPatternDepth))
		}
		p.depth++
		if err := p.next(); err != nil {
			return nil, err
		}
		e, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		p.depth--
		if p.tok.kind != tokClose {
			return nil, p.fail(fmt.Sprintf("the ( at offset %d is not closed", open))
		}
		return e, p.next()
	case tokSelector:
		return p.parseCondition()
	}
	return nil, p.fail(fmt.Sprintf("expected a selector such as $.field or ( at offset %d, found %s", p.tok.offset, p.tok))
}

// parseCondition parses SELECTOR OPERATOR VALUE, or SELECTOR IS NULL and
// the like.
func (p *jsonPatternParser) parseCondition() (jsonExpr, error) {
	selector := p.tok
	path, err := p.parseSelector(selector)
	if err != nil {
		return nil, err
	}
	if err := p.next(); err != nil {
		return nil, err
	}
	c := jsonCondition{path: path}
	switch {
	case p.tok.kind == tokWord && (strings.EqualFold(p.tok.text, "IS") || strings.EqualFold(p.tok.text, "NOT")):
		first := strings.ToUpper(p.tok.text)
		if err := p.next(); err != nil {
			return nil, err
		}
		c.op = first + " " + strings.ToUpper(p.tok.text)
		if p.tok.kind != tokWord || (c.op != opIsNull && c.op != opNotExists && c.op != opIsTrue && c.op != opIsFalse) {
			return nil, p.fail(fmt.Sprintf("after %s %s, expected %s", selector.text, first, map[string]string{"IS": "NULL, TRUE or FALSE", "NOT": "EXISTS"}[first]))
		}
		return c, p.next()
	case p.tok.kind != tokOperator:
		return nil, p.fail(fmt.Sprintf("expected =, !=, <, >, <=, >=, IS NULL, IS TRUE, IS FALSE or NOT EXISTS after %s, found %s", selector.text, p.tok))
	}
	c.op = p.tok.text
	if err := p.next(); err != nil {
		return nil, err
	}
	value := p.tok
	switch value.kind {
	case tokString:
		c.glob = value.text
	case tokWord:
		if len(value.text) > 1 && strings.HasPrefix(value.text, "%") && strings.HasSuffix(value.text, "%") {
			return nil, p.fail(fmt.Sprintf("the emulator does not support regular expressions (%s): use a string with * wildcards", value.text))
		}
		if f, err := strconv.ParseFloat(value.text, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			c.isNumber, c.number = true, f
		} else {
			c.glob = value.text
		}
	default:
		return nil, p.fail(fmt.Sprintf("expected a value after %s %s, found %s", selector.text, c.op, value))
	}
	if c.op != "=" && c.op != "!=" && !c.isNumber {
		return nil, p.fail(fmt.Sprintf("%s compares numbers, and %s is not a number", c.op, value))
	}
	return c, p.next()
}

// parseSelector reads $, .name and [index] steps.
func (p *jsonPatternParser) parseSelector(t jsonToken) ([]jsonStep, error) {
	var path []jsonStep
	rest := t.text[1:]
	for rest != "" {
		switch rest[0] {
		case '.':
			end := strings.IndexAny(rest[1:], ".[")
			if end < 0 {
				end = len(rest) - 1
			}
			name := rest[1 : end+1]
			if name == "" {
				return nil, p.fail(fmt.Sprintf("selector %s has an empty field name", t.text))
			}
			path = append(path, jsonStep{name: name, index: -1})
			rest = rest[end+1:]
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, p.fail(fmt.Sprintf("selector %s has a [ without ]", t.text))
			}
			i, err := strconv.Atoi(rest[1:end])
			if err != nil || i < 0 {
				return nil, p.fail(fmt.Sprintf("selector %s: an array index is a number from 0, not %q", t.text, rest[1:end]))
			}
			path = append(path, jsonStep{index: i})
			rest = rest[end+1:]
		default:
			return nil, p.fail(fmt.Sprintf("selector %s: after $, a selector is made of .field and [index]", t.text))
		}
	}
	return path, nil
}

// next reads the next token into p.tok.
func (p *jsonPatternParser) next() error {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t' || p.src[p.pos] == '\n' || p.src[p.pos] == '\r') {
		p.pos++
	}
	start := p.pos
	if start == len(p.src) {
		p.tok = jsonToken{kind: tokEnd, offset: p.base + start}
		return nil
	}
	rest := p.src[start:]
	emit := func(kind, n int) error {
		p.tok = jsonToken{kind: kind, text: rest[:n], offset: p.base + start}
		p.pos += n
		return nil
	}
	switch {
	case rest[0] == '(':
		return emit(tokOpen, 1)
	case rest[0] == ')':
		return emit(tokClose, 1)
	case strings.HasPrefix(rest, "&&"):
		return emit(tokAnd, 2)
	case strings.HasPrefix(rest, "||"):
		return emit(tokOr, 2)
	case strings.HasPrefix(rest, "!=") || strings.HasPrefix(rest, "<=") || strings.HasPrefix(rest, ">="):
		return emit(tokOperator, 2)
	case rest[0] == '=' || rest[0] == '<' || rest[0] == '>':
		return emit(tokOperator, 1)
	case rest[0] == '"':
		return p.quoted(rest, start)
	}
	n := strings.IndexFunc(rest, func(r rune) bool {
		return strings.ContainsRune(" \t\r\n()=!<>&|\"", r)
	})
	if n < 0 {
		n = len(rest)
	}
	if n == 0 {
		return p.fail(fmt.Sprintf("unexpected %q at offset %d", rest[:1], p.base+start))
	}
	if rest[0] == '$' {
		return emit(tokSelector, n)
	}
	return emit(tokWord, n)
}

// quoted reads a double-quoted string, with JSON's escapes.
func (p *jsonPatternParser) quoted(rest string, start int) error {
	for i := 1; i < len(rest); i++ {
		switch rest[i] {
		case '\\':
			i++
		case '"':
			var s string
			if err := json.Unmarshal([]byte(rest[:i+1]), &s); err != nil {
				return p.fail(fmt.Sprintf("the string at offset %d is not a valid quoted string", p.base+start))
			}
			p.tok = jsonToken{kind: tokString, text: s, offset: p.base + start}
			p.pos += i + 1
			return nil
		}
	}
	return p.fail(fmt.Sprintf("the quote at offset %d is not closed", p.base+start))
}

// isJSONPattern reports whether a filter pattern is a JSON one.
func isJSONPattern(pattern string) bool {
	return strings.HasPrefix(strings.TrimSpace(pattern), "{")
}
