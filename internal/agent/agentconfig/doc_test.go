package agentconfig

import (
	"os"
	"strings"
	"testing"
)

// TestDocExample loads the example file of docs/agent.md, so that the
// documentation shows a configuration that works.
func TestDocExample(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/agent.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "### An example\n\n```yaml\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/agent.md has no example under \"### An example\"")
	}
	cfg, err := loadOne(t, example)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Tunnels) != 2 || cfg.Tunnels["web"].Addr != "http://localhost:3000" || cfg.Tunnels["ssh"].Addr != "localhost:22" {
		t.Errorf("tunnels: %+v", cfg.Tunnels)
	}
}
