package api

import (
	"os"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/filters"
)

// TestListFilterOfEveryFamily: every family routed takes a filter over
// its body, whose example (in the messages of ERR_SLUICE_335) compiles,
// and the examples of docs/api.md#filtering-lists compile against the
// family they are given for.
func TestListFilterOfEveryFamily(t *testing.T) {
	envs := map[string]*filters.ObjectEnv{}
	for _, f := range routedFamilies(t) {
		env, err := filters.NewObjectEnv(f.body)
		if err != nil {
			t.Fatalf("%s: %v", f.path, err)
		}
		if _, err := env.Compile(env.Example()); err != nil {
			t.Errorf("%s: the example %s: %v", f.path, env.Example(), err)
		}
		envs[f.path] = env
	}
	raw, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	for _, c := range []struct{ path, filter string }{
		{"/api_keys", `obj.description.startsWith("prod")`},
		{"/event_destinations", `obj.format == "json" && obj.metadata.contains("team")`},
		{"/event_subscriptions", `obj.sources.exists(s, s.type == "http_request_complete.v0")`},
		{"/agent_ingresses", `has(obj.certificate_management_policy) && obj.certificate_management_policy.private_key_type == "ecdsa"`},
		{"/bot_users", `obj.active && obj.name.matches("^ci-")`},
		{"/credentials", `"*" in obj.acl || !has(obj.owner_id)`},
		{"/reserved_domains", `obj.domain.startsWith("*.") && obj.region == "eu"`},
		{"/app/sessions", `obj.browser_session.location.country_code == "DE" && !has(obj.edge)`},
		{"/reserved_domains", `obj.created_at >= "2026-11-01"`},
		{"/bot_users", `timestamp(obj.created_at) > timestamp("2026-11-01T00:00:00Z")`},
		{"/api_keys", `timestamp(obj.created_at) + duration("24h") > timestamp("2026-11-02T00:00:00Z")`},
		{"/credentials", `size(obj.acl) > 1 && obj.acl[1] == "*"`},
	} {
		if !strings.Contains(doc, c.filter) && !strings.Contains(doc, strings.ReplaceAll(c.filter, "||", `\|\|`)) {
			t.Errorf("docs/api.md does not give the filter %s", c.filter)
		}
		if _, err := envs[c.path].Compile(c.filter); err != nil {
			t.Errorf("%s: %s: %v", c.path, c.filter, err)
		}
	}
}
