package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionOf(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "-compiler", Value: "gc"},
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "14f3a86d1c2e9b0a7f3e4d5c6b7a8091a2b3c4d5"},
		{Key: "vcs.time", Value: "2026-11-28T17:02:11Z"},
	}
	for _, tt := range []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{"tagged", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.4.0"}, Settings: vcs},
			"v1.4.0 (revision 14f3a86d1c2e, 2026-11-28T17:02:11Z) go1.26.8"},
		{"modified checkout", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: append(vcs[:len(vcs):len(vcs)], debug.BuildSetting{Key: "vcs.modified", Value: "true"})},
			"(devel) (revision 14f3a86d1c2e, 2026-11-28T17:02:11Z, modified) go1.26.8"},
		{"no VCS", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, "(devel) go1.26.8"},
		{"no version", &debug.BuildInfo{}, "devel"},
		{"no build information", nil, "devel (the binary holds no build information)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionOf(tt.info); got != tt.want {
				t.Fatalf("versionOf = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestVersionFlag checks that sluice --version prints the version of the
// binary on one line and exits 0, without running a command.
func TestVersionFlag(t *testing.T) {
	clearSluiceEnv(t)
	out, _, err := runSluice(t, "", "--version")
	if err != nil {
		t.Fatal(err)
	}
	if want := "sluice version " + binaryVersion() + "\n"; out != want || strings.Count(out, "\n") != 1 {
		t.Fatalf("printed %q, want %q", out, want)
	}
}
