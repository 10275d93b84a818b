package loadgen

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// readLoadAverage returns the system's load average over the last minute,
// from /proc/loadavg.
func readLoadAverage() (float64, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, err
	}
	fields := bytes.Fields(b)
	if len(fields) == 0 {
		return 0, fmt.Errorf("/proc/loadavg is empty")
	}
	load, err := strconv.ParseFloat(string(fields[0]), 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/loadavg: %w", err)
	}
	return load, nil
}
