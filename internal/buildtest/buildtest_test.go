package buildtest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCommandName(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for pkg, want := range map[string]string{
		"github.com/sluicehq/sluice/cmd/sluice-agent": "sluice-agent",
		"github.com/nats-io/nats-server/v2":           "nats-server",
		"./cmd/sluice":                                "sluice",
		".":                                           filepath.Base(wd),
	} {
		if got := commandName(pkg); got != want {
			t.Errorf("commandName(%q) = %q, want %q", pkg, got, want)
		}
	}
}

// TestBinaryFromRun: a command in the directory of BinariesEnv is taken
// from it, not built.
func TestBinaryFromRun(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "nats-server")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(BinariesEnv, dir)
	if got := Binary(t, "github.com/nats-io/nats-server/v2"); got != bin {
		t.Fatalf("Binary = %s, want %s from %s", got, bin, BinariesEnv)
	}
}
