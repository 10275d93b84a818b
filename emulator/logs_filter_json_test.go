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
