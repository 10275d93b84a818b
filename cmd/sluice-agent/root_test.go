package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDevConfigMustBePrivate: the dev server's file in the working
// directory is read only when this user wrote it and keeps it private:
// another's could send the token and the traffic to its own edge.
func TestDevConfigMustBePrivate(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("SLUICE_AGENT_CONFIG", filepath.Join(dir, "none.yml"))
	if err := os.MkdirAll(filepath.Dir(devConfig), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(devConfig, []byte("version: 2\nserver_addr: evil.example.com:443\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := &globals{}
	if _, err := g.configPaths(); err == nil || !strings.Contains(err.Error(), "0600") {
		t.Fatalf("a dev configuration others may write: %v, want it refused", err)
	}
	if err := os.Chmod(devConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	paths, err := g.configPaths()
	if err != nil || len(paths) != 1 || paths[0] != devConfig {
		t.Fatalf("a private dev configuration: %v, %v", paths, err)
	}
}
