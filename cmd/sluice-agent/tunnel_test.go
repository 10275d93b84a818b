package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestTunnelCommandChecksLabels: `sluice-agent tunnel` needs --label,
// and refuses a label that is not NAME=VALUE, as the configuration does,
// before it connects anywhere.
func TestTunnelCommandChecksLabels(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		err  string
	}{
		{"no label", []string{"tunnel", "8080"}, "give the tunnel's labels with --label NAME=VALUE"},
		{"label without =", []string{"tunnel", "--label", "edge", "8080"}, `labels[0]: "edge" has no '='`},
		{"label twice", []string{"tunnel", "--label", "edge=a", "--label", "edge=b", "8080"}, `labels[1]: label "edge" is given twice`},
		{"bad addr", []string{"tunnel", "--label", "edge=a", "0"}, "addr: port \"0\""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			t.Setenv("SLUICE_AGENT_CONFIG", filepath.Join(dir, "none.yml"))
			cmd := newRootCommand()
			cmd.SetArgs(c.args)
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			err := cmd.Execute()
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("error %v; want one saying %q", err, c.err)
			}
		})
	}
}
