package agentconfig_test

import (
	"fmt"

	"github.com/sluicehq/sluice/internal/agent/agentconfig"
)

// The body the npm package ngrok posts: its options ride along, and are
// ignored.
func ExampleDecodeTunnelJSON() {
	t, err := agentconfig.DecodeTunnelJSON([]byte(`{"proto":"http","addr":3000,"authtoken":"x","configPath":"/tmp/a.yml","name":"abc"}`))
	fmt.Println(t.Name, t.Proto, t.Addr, t.Inspect, t.Schemes, err)

	_, err = agentconfig.DecodeTunnelJSON([]byte(`{"name":"abc","proto":"tcp","addr":"localhost:22","subdomain":"x"}`))
	fmt.Println(err)
	// Output:
	// abc http http://localhost:3000 true [https http] <nil>
	// subdomain: is not supported: give the whole name with domain, such as domain: app.example.com
}
