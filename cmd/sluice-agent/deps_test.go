package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLinksNoServerParts: sluice-agent is small because it links none of
// the server's parts.
func TestLinksNoServerParts(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	forbidden := []string{
		"github.com/nats-io/", "github.com/aws/", "cel.dev/",
		"github.com/sluicehq/sluice/internal/store", "github.com/sluicehq/sluice/internal/emulator",
		"github.com/sluicehq/sluice/pipeline", "github.com/sluicehq/sluice/edge", "github.com/sluicehq/sluice/sinks",
		"github.com/sluicehq/sluice/internal/api",
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			root := strings.TrimSuffix(f, "/")
			if dep == root || strings.HasPrefix(dep, root+"/") {
				t.Errorf("sluice-agent links %s", dep)
			}
		}
	}
}
