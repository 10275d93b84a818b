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

// TestLoopbackOnly checks the addresses LoopbackHTTPClient connects to,
// without connecting.
func TestLoopbackOnly(t *testing.T) {
	for address, ok := range map[string]bool{
		"127.0.0.1:4567":        true,
		"127.3.2.1:80":          true,
		"[::1]:443":             true,
		"10.0.0.1:443":          false,
		"169.254.169.254:80":    false,
		"[2001:db8::1]:443":     false,
		"kinesis.amazonaws.com": false,
	} {
		if err := loopbackOnly("tcp", address, nil); (err == nil) != ok {
			t.Errorf("loopbackOnly(%s) = %v, want allowed %v", address, err, ok)
		}
	}
}
