package loadgen

import (
	"testing"

	"github.com/sluicehq/sluice/trafficpolicy"
)

// TestRouteModulesPolicyParses: the bench's route policy is one the edge
// runs, with one rule on requests.
func TestRouteModulesPolicyParses(t *testing.T) {
	p, err := trafficpolicy.Parse([]byte(routeModulesPolicy))
	if err != nil {
		t.Fatal(err)
	}
	if req, resp := p.Rules(); req != 1 || resp != 0 {
		t.Fatalf("rules %d on requests and %d on responses, want 1 and 0", req, resp)
	}
}
