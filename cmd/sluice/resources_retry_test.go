package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"
)

// TestEveryAPICommandRetriesRateLimits runs every command that calls the
// API (every command with --api-url) against an API that refuses each
// request with 429 and Retry-After: 0, and checks that each sends its
// first request rateLimitAttempts times, says so once on stderr, and
// fails with the API's refusal. A new command is in the test by having
// --api-url; the table gives the arguments that get it to its request.
func TestEveryAPICommandRetriesRateLimits(t *testing.T) {
	clearSluiceEnv(t)
	// Arguments past the command's path, for the commands that check
	// theirs before asking the API.
	args := map[string][]string{
		"sluice agent-ingresses create":                            {"--domain", "app.example.com"},
		"sluice agent-ingresses update":                            {"ai_1", "--description", "d"},
		"sluice api-keys update":                                   {"ak_1", "--description", "d"},
		"sluice bot-users create":                                  {"--name", "n"},
		"sluice bot-users update":                                  {"bot_1", "--name", "n"},
		"sluice credentials allows":                                {"cr_1", "app.example.com"},
		"sluice credentials update":                                {"cr_1", "--description", "d"},
		"sluice destinations create":                               {"--kinesis-stream-arn", kinesisARN, "--role-arn", roleARN},
		"sluice destinations update":                               {"ed_1", "--description", "d"},
		"sluice edges https update":                                {"edghts_1", "--description", "d"},
		"sluice edges https routes create":                         {"--edge", "edghts_1", "--match-type", "path_prefix", "--match", "/"},
		"sluice edges https routes update":                         {"edghtsrt_1", "--edge", "edghts_1", "--description", "d"},
		"sluice reserved-domains create":                           {"--domain", "app.example.com"},
		"sluice reserved-domains update":                           {"rd_1", "--description", "d"},
		"sluice subscriptions create":                              {"--source", "http_request_complete.v0", "--destination-id", "ed_1"},
		"sluice subscriptions update":                              {"esb_1", "--description", "d"},
		"sluice subscriptions replay":                              {"esb_1", "--since", "1h"},
		"sluice subscriptions sources add":                         {"esb_1", "--type", "http_request_complete.v0"},
		"sluice subscriptions sources update":                      {"esb_1", "http_request_complete.v0", "--filter", "true"},
		"sluice subscriptions sources get":                         {"esb_1", "http_request_complete.v0"},
		"sluice subscriptions sources delete":                      {"esb_1", "http_request_complete.v0"},
		"sluice tail":                                              {"ed_1"},
		"sluice destinations delete-dead-letters":                  {"ed_1", "--all"},
		"sluice edges https routes circuit-breaker set":            {"edghtsrt_1", "--edge", "edghts_1"},
		"sluice edges https routes websocket-tcp-converter set":    {"edghtsrt_1", "--edge", "edghts_1"},
		"sluice edges https routes circuit-breaker get":            {"edghtsrt_1", "--edge", "edghts_1"},
		"sluice edges https routes circuit-breaker delete":         {"edghtsrt_1", "--edge", "edghts_1"},
		"sluice edges https routes websocket-tcp-converter get":    {"edghtsrt_1", "--edge", "edghts_1"},
		"sluice edges https routes websocket-tcp-converter delete": {"edghtsrt_1", "--edge", "edghts_1"},
		"sluice edges https routes get":                            {"edghtsrt_1", "--edge", "edghts_1"},
		"sluice edges https routes delete":                         {"edghtsrt_1", "--edge", "edghts_1"},
		"sluice edges https routes list":                           {"--edge", "edghts_1"},
		"sluice edges https routes backend set":                    {"edghtsrt_1", "--edge", "edghts_1", "--backend-id", "bkdtg_1"},
		"sluice edges https routes backend get":                    {"edghtsrt_1", "--edge", "edghts_1"},
		"sluice edges https routes backend delete":                 {"edghtsrt_1", "--edge", "edghts_1"},
		"sluice edges https routes traffic-policy set":             {"edghtsrt_1", "--edge", "edghts_1", "--value", "on_http_request: []"},
		"sluice edges https routes traffic-policy get":             {"edghtsrt_1", "--edge", "edghts_1"},
		"sluice edges https routes traffic-policy delete":          {"edghtsrt_1", "--edge", "edghts_1"},
		"sluice backends tunnel-group create":                      {"--labels", "edge=web"},
		"sluice backends tunnel-group update":                      {"bkdtg_1", "--description", "d"},
	}
	// The commands with --api-url that do not retry through the API's
	// client: publish retries a 429 of POST /events itself, healthcheck
	// asks a probe once, and app-sessions record, refresh and end go to
	// NATS.
	skip := map[string]bool{
		"sluice publish": true, "sluice healthcheck": true,
		"sluice app-sessions record": true, "sluice app-sessions refresh": true, "sluice app-sessions end": true,
	}

	var mu sync.Mutex
	var requests []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests = append(requests, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error_code":"ERR_SLUICE_130","status_code":429,"msg":"the key's account has its share of management requests in flight","details":{"operation_id":"op_1"}}`))
	}))
	t.Cleanup(api.Close)

	var commands []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() && (c.Flags().Lookup("api-url") != nil || c.InheritedFlags().Lookup("api-url") != nil) {
			commands = append(commands, c)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCommand())
	if len(commands) < 50 {
		t.Fatalf("found %d commands with --api-url; the walk is wrong", len(commands))
	}
	for _, c := range commands {
		path := c.CommandPath()
		if skip[path] {
			continue
		}
		t.Run(strings.TrimPrefix(path, "sluice "), func(t *testing.T) {
			given, ok := args[path]
			if !ok {
				given = placeholderArgs(c)
			}
			mu.Lock()
			requests = nil
			mu.Unlock()
			cmdArgs := append(strings.Fields(strings.TrimPrefix(path, "sluice ")), given...)
			cmdArgs = append(cmdArgs, "--api-url", api.URL, "--api-key", "sk_test")
			_, stderr, err := runSluice(t, "", cmdArgs...)
			mu.Lock()
			sent := append([]string(nil), requests...)
			mu.Unlock()
			if len(sent) != rateLimitAttempts {
				t.Fatalf("sluice %s: sent %v (error %v), want its first request %d times", strings.Join(cmdArgs, " "), sent, err, rateLimitAttempts)
			}
			for _, r := range sent {
				if r != sent[0] {
					t.Fatalf("sent %v, want the same request each time", sent)
				}
			}
			if err == nil || !strings.Contains(err.Error(), "still rate limited after 5 attempts: ERR_SLUICE_130 (429)") {
				t.Errorf("error %v, want the API's 429 after %d attempts", err, rateLimitAttempts)
			}
			method, target, _ := strings.Cut(sent[0], " ")
			if n := strings.Count(stderr, "sluice: rate limited (ERR_SLUICE_130): retrying "+method+" "+api.URL+target+" in 0s, attempt 3 of 5\n"); n != 1 {
				t.Errorf("stderr says it is rate limited %d times, want once:\n%s", n, stderr)
			}
		})
	}
}

// placeholderArgs returns the fewest arguments c takes, each an id.
func placeholderArgs(c *cobra.Command) []string {
	var args []string
	for range 3 {
		if c.Args == nil || c.Args(c, args) == nil {
			return args
		}
		args = append(args, "id_1")
	}
	return args
}
