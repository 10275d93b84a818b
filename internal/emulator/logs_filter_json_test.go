package emulator

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// jsonFilterEvents are the messages the JSON pattern table is matched
// against, by index.
var jsonFilterEvents = []string{
	0: `{"event_type": "http_request_complete.v0", "object": {"conn": {"server_port": 443}, "path": "/api/users"}, "latency_ms": 120.5, "tags": ["edge", "eu"], "ok": true, "error": null}`,
	1: `{"event_type": "http_request_complete.v0", "object": {"conn": {"server_port": 8080}, "path": "/health"}, "latency_ms": 3, "tags": ["core"], "ok": false}`,
	2: `{"event_type": "dns_query.v0", "object": {"conn": {"server_port": "443"}}, "latency_ms": 1e3, "matrix": [[1, 2], [3, 4]]}`,
	3: `not json at all: $.event_type = "http_request_complete.v0"`,
	4: `["an", "array"]`,
	5: `{"event_type": "http_request_complete.v1", "object": null}`,
}

func TestJSONFilterPatterns(t *testing.T) {
	tests := []struct {
		pattern string
		want    []int // indices of jsonFilterEvents that match
	}{
		{`{ $.event_type = "http_request_complete.v0" }`, []int{0, 1}},
		{`{$.event_type="http_request_complete.v0"}`, []int{0, 1}},
		{`{ $.event_type = http_request_complete.v0 }`, []int{0, 1}},
		{`{ $.event_type != "http_request_complete.v0" }`, []int{2, 5}},
		{`{ $.event_type = "http_request_complete.*" }`, []int{0, 1, 5}},
		{`{ $.event_type = "*.v0" }`, []int{0, 1, 2}},
		{`{ $.event_type = "http*complete*v1" }`, []int{5}},
		{`{ $.event_type = "*" }`, []int{0, 1, 2, 5}},
		{`{ $.object.path != "/api/*" }`, []int{1}},
		// numbers match numbers, strings strings
		{`{ $.object.conn.server_port = 443 }`, []int{0}},
		{`{ $.object.conn.server_port = "443" }`, []int{2}},
		{`{ $.object.conn.server_port != 443 }`, []int{1, 2}},
		{`{ $.latency_ms > 100 }`, []int{0, 2}},
		{`{ $.latency_ms >= 1000 }`, []int{2}},
		{`{ $.latency_ms < 120.5 }`, []int{1}},
		{`{ $.latency_ms <= 120.5 }`, []int{0, 1}},
		{`{ $.latency_ms = 1000 }`, []int{2}},
		{`{ $.latency_ms = -3 }`, nil},
		{`{ $.object.conn.server_port > 400 }`, []int{0, 1}},
		// IS and NOT EXISTS
		{`{ $.error IS NULL }`, []int{0}},
		{`{ $.object IS NULL }`, []int{5}},
		{`{ $.error NOT EXISTS }`, []int{1, 2, 4, 5}}, // a JSON array has no fields
		{`{ $.ok IS TRUE }`, []int{0}},
		{`{ $.ok IS FALSE }`, []int{1}},
		{`{ $.ok is true }`, []int{0}},
		{`{ $.missing = "*" }`, nil},
		{`{ $.missing != "x" }`, nil},
		// arrays
		{`{ $.tags[0] = "edge" }`, []int{0}},
		{`{ $.tags[1] = "eu" }`, []int{0}},
		{`{ $.tags[1] NOT EXISTS }`, []int{1, 2, 4, 5}},
		{`{ $.matrix[1][0] = 3 }`, []int{2}},
		{`{ $[1] = "array" }`, []int{4}},
		// && || and parentheses
		{`{ $.event_type = "http_request_complete.v0" && $.object.conn.server_port = 443 }`, []int{0}},
		{`{ ($.event_type = "http_request_complete.v0") && ($.latency_ms < 10) }`, []int{1}},
		{`{ $.ok IS TRUE || $.latency_ms > 500 }`, []int{0, 2}},
		{`{ $.ok IS FALSE || $.ok IS TRUE && $.latency_ms > 1000 }`, []int{1}}, // && binds tighter
		{`{ ($.ok IS FALSE || $.ok IS TRUE) && $.latency_ms > 100 }`, []int{0}},
		{`{ (($.event_type = "dns_query.v0")) }`, []int{2}},
		{`{ $.object.path = "/health" || $.event_type = "*.v1" || $.matrix[0][1] = 2 }`, []int{1, 2, 5}},
		{`{ $.a = "x" && $.b = "y" || $.event_type = "dns_query.v0" }`, []int{2}},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			p, err := parseFilterPattern(tt.pattern)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			var got []int
			for i, message := range jsonFilterEvents {
				if p.matches(message) {
					got = append(got, i)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("matches events %v, want %v", got, tt.want)
			}
		})
	}
}

func TestJSONFilterPatternErrors(t *testing.T) {
	tests := []struct {
		pattern string
		want    string // in the message
	}{
		{`{ }`, "the JSON pattern is empty"},
		{`{ $.x = 1`, "ends with }"},
		{`{ $.x }`, "expected =, !=, <, >, <=, >=, IS NULL"},
		{`{ $.x = }`, "expected a value after $.x ="},
		{`{ $.x > "abc" }`, `> compares numbers, and "abc" is not a number`},
		{`{ $.x < abc }`, `< compares numbers`},
		{`{ $.x = 1 $.y = 2 }`, "join conditions with && or ||"},
		{`{ ($.x = 1 }`, "the ( at offset 2 is not closed"},
		{`{ $.x = 1) }`, `unexpected ")"`},
		{`{ $.x = 1 && }`, "expected a selector"},
		{`{ x = 1 }`, "expected a selector such as $.field"},
		{`{ $.x IS MAYBE }`, "expected NULL, TRUE or FALSE"},
		{`{ $.x NOT THERE }`, "expected EXISTS"},
		{`{ $.x = "open }`, "the quote at offset 8 is not closed"},
		{`{ $.a[x] = 1 }`, "an array index is a number from 0"},
		{`{ $.a[1 = 1 }`, "has a [ without ]"},
		{`{ $..a = 1 }`, "empty field name"},
		{`{ $x = 1 }`, "a selector is made of .field and [index]"},
		{`{ $.x = 1 & $.y = 2 }`, `unexpected "&"`},
		{`[ip, user]`, "term patterns"},
		{`{ $.x = %ab+c% }`, "does not support regular expressions"},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			_, err := parseFilterPattern(tt.pattern)
			var apiErr *apiError
			if !errors.As(err, &apiErr) {
				t.Fatalf("error %v, want an InvalidParameterException", err)
			}
			if apiErr.Code != "InvalidParameterException" || apiErr.Status != 400 {
				t.Errorf("error %s %d, want InvalidParameterException 400", apiErr.Code, apiErr.Status)
			}
			if !strings.Contains(apiErr.Message, tt.want) {
				t.Errorf("message %q does not say %q", apiErr.Message, tt.want)
			}
		})
	}
}

// TestFilterPatternLimits checks that a pattern longer than AWS's 1024
// characters, or nesting parentheses deeper than 32 levels, is refused
// with a message saying so, whatever its size, instead of recursing until
// the stack overflows; and that what is taken evaluates as deep as its
// parentheses nest, not as long as its chains of && and ||.
func TestFilterPatternLimits(t *testing.T) {
	nested := func(depth int) string {
		return "{ " + strings.Repeat("(", depth) + "$.a = 1" + strings.Repeat(")", depth) + " }"
	}
	refused := func(t *testing.T, err error, want string) {
		t.Helper()
		var apiErr *apiError
		if !errors.As(err, &apiErr) || apiErr.Code != "InvalidParameterException" {
			t.Fatalf("error %v, want an InvalidParameterException", err)
		}
		if !strings.Contains(apiErr.Message, want) {
			t.Errorf("message %q does not say %q", apiErr.Message, want)
		}
	}
	t.Run("length", func(t *testing.T) {
		if _, err := parseFilterPattern(strings.Repeat("é", maxFilterPatternLength)); err != nil {
			t.Fatalf("a pattern of 1024 characters: %v", err)
		}
		_, err := parseFilterPattern(strings.Repeat("ab ", 342)) // 1026
		refused(t, err, "Member must have length less than or equal to 1024 (this one has 1026 characters)")
		_, err = parseFilterPattern(nested(6_000_000))
		refused(t, err, "less than or equal to 1024")
		if n := len(err.Error()); n > 1024 {
			t.Errorf("the refusal of a 12 MB pattern is %d bytes long", n)
		}
	})
	t.Run("depth", func(t *testing.T) {
		p, err := parseFilterPattern(nested(maxJSONPatternDepth))
		if err != nil {
			t.Fatalf("parentheses 32 deep: %v", err)
		}
		if !p.matches(`{"a": 1}`) {
			t.Error("the pattern 32 deep does not match")
		}
		_, err = parseFilterPattern(nested(maxJSONPatternDepth + 1))
		refused(t, err, "nests parentheses deeper than 32 levels")
		// Past the length limit, for callers that parse without it.
		_, err = parseJSONPattern(nested(1_000_000))
		refused(t, err, "deeper than 32 levels")
	})
	t.Run("eval depth", func(t *testing.T) {
		conditions := make([]string, 120)
		for i := range conditions {
			conditions[i] = "$.a = 1"
		}
		for _, join := range []string{" && ", " || ", " && $.b = 1 || "} {
			p, err := parseJSONPattern("{ " + strings.Join(conditions, join) + " }")
			if err != nil {
				t.Fatal(err)
			}
			if d := exprDepth(p.root); d > 3 {
				t.Errorf("a chain of %q is %d nodes deep, want at most 3", join, d)
			}
		}
		p, err := parseJSONPattern(nested(maxJSONPatternDepth))
		if err != nil {
			t.Fatal(err)
		}
		if d := exprDepth(p.root); d > 2*maxJSONPatternDepth+3 {
			t.Errorf("parentheses %d deep make a tree %d deep", maxJSONPatternDepth, d)
		}
	})
}

// exprDepth is how deep eval recurses into e.
func exprDepth(e jsonExpr) int {
	var operands []jsonExpr
	switch e := e.(type) {
	case jsonAnd:
		operands = e
	case jsonOr:
		operands = e
	}
	deepest := 0
	for _, o := range operands {
		deepest = max(deepest, exprDepth(o))
	}
	return deepest + 1
}
