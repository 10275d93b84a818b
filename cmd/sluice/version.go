package main

import (
	"runtime/debug"
	"strings"
)

// versionOf returns what sluice --version prints after "sluice ": the
// module version the build recorded (buildVersion's, "(devel)" for a
// build from a checkout without a tag) and, when the build recorded them,
// the VCS revision, its time and whether the tree had changes, then the
// Go release that built it:
//
//	v1.4.0 (revision 14f3a86d1c2e, 2026-11-28T17:02:11Z) go1.26.8
//	(devel) (revision 14f3a86d1c2e, 2026-11-28T17:02:11Z, modified) go1.26.8
func versionOf(info *debug.BuildInfo) string {
	if info == nil {
		return "devel (the binary holds no build information)"
	}
	version := info.Main.Version
	if version == "" {
		version = "devel"
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	var vcs []string
	if rev := settings["vcs.revision"]; rev != "" {
		vcs = append(vcs, "revision "+rev[:min(len(rev), 12)])
		if t := settings["vcs.time"]; t != "" {
			vcs = append(vcs, t)
		}
		if settings["vcs.modified"] == "true" {
			vcs = append(vcs, "modified")
		}
	}
	if len(vcs) > 0 {
		version += " (" + strings.Join(vcs, ", ") + ")"
	}
	if info.GoVersion != "" {
		version += " " + info.GoVersion
	}
	return version
}

// binaryVersion is versionOf the running binary.
func binaryVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	return versionOf(info)
}
