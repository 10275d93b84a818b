package agentconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// inDir makes a temporary directory the working directory, writes files
// (name → content) into it, and returns it.
func inDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// loadOne loads content as a.yml.
func loadOne(t *testing.T, content string) (Config, error) {
	t.Helper()
	inDir(t, map[string]string{"a.yml": content})
	return Load([]string{"a.yml"})
}

// wantError fails unless err's text has a line starting with prefix and
// holding each of parts.
func wantError(t *testing.T, err error, prefix string, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want %q", prefix)
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		for _, p := range parts {
			if !strings.Contains(line, p) {
				t.Fatalf("error %q does not say %q", line, p)
			}
		}
		return
	}
	t.Fatalf("error %q has no line starting %q", err, prefix)
}
