package store

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsFlowOneWay checks the layering issue 26 set: the
// configuration store links no AWS SDK but the SDK's ARN grammar (one
// file, no dependencies, the same parser the sinks read ARNs with), as
// what it checks of a target is data (sinks/targets); no server package
// links the public client; and dnsname, the rule of a domain name,
// depends on no other package of sluice's. The conventions every route
// of the API's listener shares are a leaf, apiconv, which ingest (POST
// /events) imports instead of linking the whole management API; apiconv
// imports of sluice's only the packages its conventions are made of.
func TestImportsFlowOneWay(t *testing.T) {
	for _, c := range []struct {
		pkg     string
		refused func(dep string) bool
		why     string
	}{
		{"github.com/sluicehq/sluice/internal/store", func(dep string) bool {
			return (strings.HasPrefix(dep, "github.com/aws/") && dep != "github.com/aws/aws-sdk-go-v2/aws/arn") ||
				dep == "github.com/sluicehq/sluice/sinks"
		}, "an AWS SDK package: what the store checks of a target belongs in sinks/targets"},
		{"github.com/sluicehq/sluice/internal/api", importsClient, "the public client: the API writes apiwire's bodies, which the client reads"},
		{"github.com/sluicehq/sluice/internal/store", importsClient, "the public client"},
		{"github.com/sluicehq/sluice/pipeline", importsClient, "the public client"},
		{"github.com/sluicehq/sluice/edge", importsClient, "the public client"},
		{"github.com/sluicehq/sluice/internal/dnsname", func(dep string) bool {
			return strings.HasPrefix(dep, "github.com/sluicehq/sluice/") && dep != "github.com/sluicehq/sluice/internal/dnsname"
		}, "a package of sluice's: dnsname owns its rules and limits"},
		{"github.com/sluicehq/sluice/internal/ingest", func(dep string) bool {
			return dep == "github.com/sluicehq/sluice/internal/api"
		}, "the management API: ingest shares its conventions through internal/apiconv"},
		{"github.com/sluicehq/sluice/internal/apiconv", func(dep string) bool {
			return dep == "github.com/sluicehq/sluice/internal/api" || dep == "github.com/sluicehq/sluice/internal/ingest"
		}, "a package that follows the conventions: apiconv is their leaf"},
	} {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", c.pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", c.pkg, err)
		}
		for dep := range strings.FieldsSeq(string(out)) {
			if c.refused(dep) {
				t.Errorf("%s links %s, %s", c.pkg, dep, c.why)
			}
		}
	}
	// apiconv's own imports of sluice's, not the packages they link (the
	// store links more, which apiconv does not use).
	const apiconv = "github.com/sluicehq/sluice/internal/apiconv"
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, apiconv).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", apiconv, err)
	}
	for dep := range strings.FieldsSeq(string(out)) {
		switch dep {
		case "github.com/sluicehq/sluice/internal/authheader", // the form of Authorization
			"github.com/sluicehq/sluice/internal/defaults", // the front door's defaults
			"github.com/sluicehq/sluice/internal/promreg",  // the front door's metrics
			"github.com/sluicehq/sluice/schemas",           // the operation id
			"github.com/sluicehq/sluice/trafficpolicy",     // the policy's answers, in the error body
			// The key of a request (RequestKey, store.APIKey), the refusal
			// of an unknown key (store.ErrUnauthenticated) and the longest
			// token (store.MaxTokenLength) are the store's.
			"github.com/sluicehq/sluice/internal/store":
			continue
		}
		if strings.HasPrefix(dep, "github.com/sluicehq/sluice/") {
			t.Errorf("%s imports %s, a package of sluice's its conventions do not need: apiconv is a leaf", apiconv, dep)
		}
	}
}

// importsClient reports whether dep is the public client.
func importsClient(dep string) bool { return dep == "github.com/sluicehq/sluice/client" }
