package agentconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSaveAuthtoken sets the authtoken of a file, creating it, or
// keeping its other keys and comments, always with mode 0600.
func TestSaveAuthtoken(t *testing.T) {
	const token = "2abcdefghijklmnopqrstuvwxyz_TOKEN"
	for _, c := range []struct {
		name, before string // before is "-" for no file
		keep         []string
	}{
		{"new file", "-", []string{"version: 2\n"}},
		{"empty file", "", []string{"version: 2\n"}},
		{"replaces", "version: 2\n# the edge\nauthtoken: old # set by hand\nlog: stdout\n",
			[]string{"version: 2\n", "# the edge\n", "# set by hand", "log: stdout\n"}},
		{"adds", "version: 2\ntunnels:\n  web:\n    proto: http\n    addr: 3000\n",
			[]string{"version: 2\n", "tunnels:\n  web:\n    proto: http\n    addr: 3000\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "dir", "sluice-agent.yml")
			if c.before != "-" {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(c.before), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := SaveAuthtoken(path, token); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range c.keep {
				if !strings.Contains(string(data), k) {
					t.Errorf("file\n%s\nlost %q", data, k)
				}
			}
			if strings.Contains(string(data), "old") {
				t.Errorf("file\n%s\nkept the old token", data)
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, %v; want 0600", fi.Mode(), err)
			}
			if c.before == "-" {
				if fi, err := os.Stat(filepath.Dir(path)); err != nil || fi.Mode().Perm() != 0o700 {
					t.Errorf("directory mode %v, %v; want 0700", fi.Mode(), err)
				}
			}
			cfg, err := Load([]string{path})
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Authtoken != token {
				t.Errorf("Authtoken = %q", cfg.Authtoken)
			}
			if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*.tmp")); len(left) > 0 {
				t.Errorf("left temporary files %v", left)
			}
		})
	}
}

// TestSaveAuthtokenRefused refuses a bad token or file, without showing
// the token.
func TestSaveAuthtokenRefused(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "list.yml")
	if err := os.WriteFile(list, []byte("- a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, path, token string }{
		{"empty token", filepath.Join(dir, "a.yml"), ""},
		{"token with space", filepath.Join(dir, "a.yml"), "secret token"},
		{"not a mapping", list, "secrettoken"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := SaveAuthtoken(c.path, c.token)
			if err == nil {
				t.Fatal("took it")
			}
			if c.token != "" && strings.Contains(err.Error(), c.token) {
				t.Errorf("error %q shows the token", err)
			}
		})
	}
}

// TestDefaultPath prefers $SLUICE_AGENT_CONFIG to the user's
// configuration directory.
func TestDefaultPath(t *testing.T) {
	t.Setenv(EnvConfig, "/etc/sluice/agent.yml")
	if got := DefaultPath(); got != "/etc/sluice/agent.yml" {
		t.Errorf("DefaultPath() = %q", got)
	}
	t.Setenv(EnvConfig, "")
	t.Setenv("XDG_CONFIG_HOME", "/home/u/.config")
	if got, want := DefaultPath(), filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "sluice-agent", "sluice-agent.yml"); got != want {
		t.Errorf("DefaultPath() = %q; want %q", got, want)
	}
}
