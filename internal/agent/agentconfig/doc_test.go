package agentconfig

import (
	"os"
	"strings"
	"testing"
)

// TestDocExample loads the example files of docs/agent.md (the
// configuration's, and the labeled tunnel's), so that the documentation
// shows configurations that work.
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
	if len(cfg.Tunnels) != 3 || cfg.Tunnels["web"].Addr != "http://localhost:3000" || cfg.Tunnels["ssh"].Addr != "localhost:22" ||
		cfg.Tunnels["shop"].Labels["edge"] != "shop" {
		t.Errorf("tunnels: %+v", cfg.Tunnels)
	}
	_, rest, ok = strings.Cut(string(doc), "## Labeled tunnels\n")
	_, rest, ok2 = strings.Cut(rest, "```yaml\n")
	labeled, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/agent.md has no example under \"## Labeled tunnels\"")
	}
	if cfg, err = loadOne(t, labeled); err != nil {
		t.Fatal(err)
	}
	if shop := cfg.Tunnels["shop"]; shop.Proto != "labeled" || len(shop.Labels) != 2 || shop.HostHeader != "rewrite" {
		t.Errorf("labeled example: %+v", shop)
	}
}
