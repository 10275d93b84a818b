package trafficpolicy

import (
	"errors"
	"strings"
	"testing"
)

// rateLimitDoc is a document with one rate-limit whose config is cfg.
func rateLimitDoc(cfg string) string {
	return "on_http_request:\n  - actions:\n      - type: rate-limit\n        config:\n" + cfg
}

const goodRateLimit = `          name: per key
          algorithm: sliding_window
          capacity: 10
          rate: 60s
          bucket_key: ["req.host", "conn.client_ip", "req.headers['x-api-key']", "getReqHeader('Authorization')"]
`

// TestParseRefuses checks that every mistake is refused with the path of
// the bad element, its line, and a message saying what is allowed.
func TestParseRefuses(t *testing.T) {
	replace := func(old, repl string) string { return rateLimitDoc(strings.Replace(goodRateLimit, old, repl, 1)) }
	const cfg = "on_http_request[0].actions[0].config"
	tests := []struct {
		name, doc, path, msg string
		line                 int
	}{
		{"not YAML", "on_http_request: [", "", "not YAML or JSON", 0},
		{"empty", "", "", "the document is empty", 0},
		{"only a comment", "# nothing\n", "", "the document is empty", 0},
		{"unknown phase", "on_tcp_close: []\n", "on_tcp_close", `unknown phase "on_tcp_close": use on_http_request, on_http_response, on_tcp_connect`, 1},
		{"phase not a list", "on_http_request: {}\n", "on_http_request", "must be a list", 1},
		{"unknown rule field", "on_http_request:\n  - nme: x\n    actions: [{type: deny}]\n", "on_http_request[0].nme", `unknown field "nme": use name, expressions, actions`, 2},
		{"no actions", "on_http_request:\n  - name: x\n", "on_http_request[0].actions", "required: a list of actions", 2},
		{"empty actions", "on_http_request:\n  - actions: []\n", "on_http_request[0].actions", "at least one action", 2},
		{"unknown action", "on_http_request:\n  - actions: [{type: redirect}]\n", "on_http_request[0].actions[0].type", `unknown action type "redirect": use one of basic-auth, compress-response, custom-response, deny, log, openid-connect, rate-limit, restrict-ips`, 2},
		{"no type", "on_http_request:\n  - actions: [{config: {}}]\n", "on_http_request[0].actions[0].type", "required: one of", 2},
		{"CEL does not compile", "on_http_request:\n  - expressions: [\"req.method == \"]\n    actions: [{type: deny}]\n", "on_http_request[0].expressions[0]", `does not compile: 1:15: Syntax error`, 2},
		{"CEL undeclared", "on_http_request:\n  - expressions: [\"req.methd == 'GET'\"]\n    actions: [{type: deny}]\n", "on_http_request[0].expressions[0]", "1:4: undeclared reference to 'req.methd' (did you mean 'req.method'?)", 2},
		{"response variable in request", "on_http_request:\n  - expressions: [\"res.status_code == 401\"]\n    actions: [{type: deny}]\n", "on_http_request[0].expressions[0]", "undeclared reference to 'res'", 2},
		{"CEL not boolean", "on_http_request:\n  - expressions: [\"req.url.path\"]\n    actions: [{type: deny}]\n", "on_http_request[0].expressions[0]", "is string: an expression must be a boolean", 2},
		{"macro not literal", "on_http_request:\n  - expressions: [\"size(getReqHeader(req.host)) > 0\"]\n    actions: [{type: deny}]\n", "on_http_request[0].expressions[0]", "getReqHeader takes a header name as a string literal", 2},
		{"deny status", "on_http_request:\n  - actions: [{type: deny, config: {status_code: 200}}]\n", "on_http_request[0].actions[0].config.status_code", "an integer from 400 to 599, not 200", 2},
		{"custom-response without status", "on_http_response:\n  - actions: [{type: custom-response, config: {body: hi}}]\n", "on_http_response[0].actions[0].config.status_code", "required: an HTTP status code", 2},
		{"custom-response status 1xx", "on_http_request:\n  - actions: [{type: custom-response, config: {status_code: 101, body: hi}}]\n", "on_http_request[0].actions[0].config.status_code", "an integer from 200 to 599, not 101", 2},
		{"custom-response header name", "on_http_response:\n  - actions: [{type: custom-response, config: {status_code: 200, headers: {\"a b\": c}}}]\n", "on_http_response[0].actions[0].config.headers.a b", "not a header name", 2},
		{"unknown config field", replace("          name: per key\n", "          name: per key\n          burst: 3\n"), cfg + ".burst", `unknown field "burst": use name, algorithm, capacity, rate, bucket_key`, 6},
		{"name missing", replace("          name: per key\n", ""), cfg + ".name", "required: a name", 5},
		{"name empty", replace("name: per key", `name: ""`), cfg + ".name", "must not be empty", 5},
		{"name too long", replace("name: per key", "name: "+strings.Repeat("é", 1024)), cfg + ".name", "fewer than 1024 characters, this one has 1024", 5},
		{"name not a string", replace("name: per key", "name: [a]"), cfg + ".name", "must be a string", 5},
		{"algorithm missing", replace("          algorithm: sliding_window\n", ""), cfg + ".algorithm", "required: sliding_window", 5},
		{"algorithm unknown", replace("sliding_window", "token_bucket"), cfg + ".algorithm", `unknown algorithm "token_bucket": the only algorithm is sliding_window`, 6},
		{"capacity missing", replace("          capacity: 10\n", ""), cfg + ".capacity", "required:", 5},
		{"capacity zero", replace("capacity: 10", "capacity: 0"), cfg + ".capacity", "an integer from 1 to 2000000000, not 0", 7},
		{"capacity too large", replace("capacity: 10", "capacity: 2000000001"), cfg + ".capacity", "not 2000000001", 7},
		{"capacity negative", replace("capacity: 10", "capacity: -1"), cfg + ".capacity", "not -1", 7},
		{"capacity fractional", replace("capacity: 10", "capacity: 1.5"), cfg + ".capacity", "not 1.5", 7},
		{"capacity a string", replace("capacity: 10", `capacity: "10"`), cfg + ".capacity", `not "10"`, 7},
		{"rate missing", replace("          rate: 60s\n", ""), cfg + ".rate", "required: a duration, a multiple of 10s from 60s to 24h", 5},
		{"rate not a duration", replace("rate: 60s", "rate: minute"), cfg + ".rate", `"minute" is not a duration`, 8},
		{"rate a number", replace("rate: 60s", "rate: 60"), cfg + ".rate", "must be a string", 8},
		{"rate too short", replace("rate: 60s", "rate: 50s"), cfg + ".rate", `"50s" is out of range: a rate is from 60s to 24h`, 8},
		{"rate too long", replace("rate: 60s", "rate: 24h10s"), cfg + ".rate", "out of range", 8},
		{"rate not a multiple of ten seconds", replace("rate: 60s", "rate: 65s"), cfg + ".rate", `"65s" is not a multiple of ten seconds`, 8},
		{"rate with milliseconds", replace("rate: 60s", "rate: 60.5s"), cfg + ".rate", "not a multiple of ten seconds", 8},
		{"bucket_key missing", replace("          bucket_key: [\"req.host\", \"conn.client_ip\", \"req.headers['x-api-key']\", \"getReqHeader('Authorization')\"]\n", ""), cfg + ".bucket_key", "required: a list of 1 to 10", 5},
		{"bucket_key empty", replace(`["req.host", "conn.client_ip", "req.headers['x-api-key']", "getReqHeader('Authorization')"]`, "[]"), cfg + ".bucket_key", "must have 1 to 10 entries, not 0", 9},
		{"bucket_key eleven", replace(`["req.host", "conn.client_ip", "req.headers['x-api-key']", "getReqHeader('Authorization')"]`, "["+strings.Repeat(`"req.host", `, 10)+`"req.host"]`), cfg + ".bucket_key", "must have 1 to 10 entries, not 11", 9},
		{"bucket_key unknown", replace(`"req.host"`, `"req.url.path"`), cfg + ".bucket_key[0]", `"req.url.path" is not a bucket key: use req.host, conn.client_ip, api_key.id, req.headers['<name>'] or getReqHeader('<Name>')`, 9},
		{"bucket_key bad header", replace(`"req.headers['x-api-key']"`, `"req.headers['x api']"`), cfg + ".bucket_key[2]", `"x api" is not a header name`, 9},
		{"bucket_key not a string", replace(`"req.host"`, `{a: b}`), cfg + ".bucket_key[0]", "must be a string", 9},
		{"config given twice", rateLimitDoc(goodRateLimit + "          capacity: 3\n"), cfg + ".capacity", "given twice", 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc))
			var perr *PolicyError
			if !errors.As(err, &perr) || !errors.Is(err, ErrInvalidPolicy) {
				t.Fatalf("Parse: %v, want a *PolicyError", err)
			}
			for _, p := range perr.Problems {
				if p.Path == tt.path && strings.Contains(p.Msg, tt.msg) && (tt.line == 0 || p.Line == tt.line) {
					return
				}
			}
			t.Fatalf("want a problem at %s line %d saying %q; got:\n%v", tt.path, tt.line, tt.msg, err)
		})
	}
}

// TestParseReportsEveryMistake checks that one error lists every mistake.
func TestParseReportsEveryMistake(t *testing.T) {
	doc := "on_http_request:\n  - actions: [{type: redirect}]\n  - expressions: ['req.nope']\n    actions: [{type: deny, config: {status_code: 99}}]\non_tcp_close: []\n"
	_, err := Parse([]byte(doc))
	var perr *PolicyError
	if !errors.As(err, &perr) || len(perr.Problems) != 4 {
		t.Fatalf("want 4 problems, got %v", err)
	}
}

// TestParseAccepts checks documents that are right, YAML and JSON.
func TestParseAccepts(t *testing.T) {
	for name, doc := range map[string]string{
		"no rule":        "on_http_request: []\n",
		"rate-limit":     rateLimitDoc(goodRateLimit),
		"longest":        rateLimitDoc(strings.NewReplacer("capacity: 10", "capacity: 2000000000", "rate: 60s", "rate: 24h", "name: per key", "name: "+strings.Repeat("é", 1023)).Replace(goodRateLimit)),
		"JSON":           `{"on_http_request": [{"name": "r", "expressions": ["hasReqHeader('X-Api-Key')"], "actions": [{"type": "rate-limit", "config": {"name": "n", "algorithm": "sliding_window", "capacity": 1, "rate": "1m", "bucket_key": ["getReqHeader(\"X-Api-Key\")"]}}]}]}`,
		"every action":   "on_http_request:\n  - actions: [{type: log, config: {metadata: {a: 1}}}, {type: deny}]\non_http_response:\n  - expressions: [\"res.status_code == 429 && actions.service.rate_limit.limited\", \"size(res.headers) >= 0\"]\n    actions: [{type: custom-response, config: {status_code: 429, headers: {content-type: application/json}, body: '{}'}}]\n",
		"null phase":     "on_http_request:\n",
		"ten bucket key": rateLimitDoc(strings.Replace(goodRateLimit, `["req.host", "conn.client_ip", "req.headers['x-api-key']", "getReqHeader('Authorization')"]`, "["+strings.Repeat(`"req.host", `, 9)+`"req.host"]`, 1)),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse([]byte(doc)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestParseExpressionNotAString checks that an expression that is not a
// string is reported once.
func TestParseExpressionNotAString(t *testing.T) {
	_, err := Parse([]byte("on_http_request:\n  - expressions: [true]\n    actions: [{type: deny}]\n"))
	var perr *PolicyError
	if !errors.As(err, &perr) || len(perr.Problems) != 1 || perr.Problems[0].Path != "on_http_request[0].expressions[0]" || perr.Problems[0].Msg != "must be a string" {
		t.Fatalf("got %v", err)
	}
}

// TestParseRefusesAnActionOutOfItsPhases checks the message of an action
// in a phase it does not run in. Every action of the specification runs
// in both HTTP phases, so the test declares one that does not.
func TestParseRefusesAnActionOutOfItsPhases(t *testing.T) {
	actionKinds["request-only"] = actionKind{phases: []phase{phaseRequest}, build: buildDeny}
	t.Cleanup(func() { delete(actionKinds, "request-only") })
	if _, err := Parse([]byte("on_http_request:\n  - actions: [{type: request-only}]\n")); err != nil {
		t.Fatalf("in its phase: %v", err)
	}
	_, err := Parse([]byte("on_http_response:\n  - actions: [{type: request-only}]\n"))
	var perr *PolicyError
	if !errors.As(err, &perr) || len(perr.Problems) != 1 || perr.Problems[0].Path != "on_http_response[0].actions[0].type" ||
		perr.Problems[0].Msg != "action request-only does not run in on_http_response: it runs in on_http_request" {
		t.Fatalf("got %v", err)
	}
}
