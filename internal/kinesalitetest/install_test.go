package kinesalitetest

import (
	"strings"
	"testing"
)

// TestNotInstalledSaysHowToInstall checks the message a developer sees when
// node_modules is missing.
func TestNotInstalledSaysHowToInstall(t *testing.T) {
	_, err := installedModule(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "npm ci") || !strings.Contains(err.Error(), "make test") {
		t.Fatalf("installedModule of an empty directory: %v, want a message saying to run npm ci or make test", err)
	}
}
