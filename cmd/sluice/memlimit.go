package main

import (
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/internal/bytesize"
)

// cgroupShare is the share of a container's memory limit that serve gives
// Go's garbage collector as its soft limit, leaving room for what Go does
// not count (the embedded server's files mapped in, thread stacks).
const cgroupShare = 0.9

// cgroupLimitFiles hold the memory limit of the process's container:
// cgroup v2, then v1.
var cgroupLimitFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// applyMemoryLimit sets Go's soft memory limit: flag, a size, or when it
// is empty, GOMEMLIMIT (which the runtime applies itself) or else 90% of
// the container's memory limit, if there is one. It logs the limit chosen.
func applyMemoryLimit(flag string, log *slog.Logger) error {
	switch {
	case flag != "":
		limit, err := bytesize.Parse(flag)
		if err != nil {
			return fmt.Errorf("--memory-limit %q: %w", flag, err)
		}
		if limit > 0 {
			debug.SetMemoryLimit(limit)
			log.Info("memory limit set", "bytes", limit, "from", "--memory-limit")
		}
	case os.Getenv("GOMEMLIMIT") != "":
		log.Info("memory limit set", "bytes", debug.SetMemoryLimit(-1), "from", "GOMEMLIMIT")
	default:
		if limit, ok := containerMemoryLimit(); ok {
			soft := int64(float64(limit) * cgroupShare)
			debug.SetMemoryLimit(soft)
			log.Info("memory limit set", "bytes", soft, "from", "the container's memory limit", "container_limit", limit)
		}
	}
	return nil
}

// containerMemoryLimit returns the memory limit of the process's cgroup,
// if it has one.
func containerMemoryLimit() (int64, bool) {
	for _, path := range cgroupLimitFiles {
		raw, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		text := strings.TrimSpace(string(raw))
		n, err := strconv.ParseInt(text, 10, 64)
		// "max" (v2) or a huge number (v1) means no limit.
		if err != nil || n <= 0 || n >= 1<<62 {
			return 0, false
		}
		return n, true
	}
	return 0, false
}
