//go:build linux

package loadgen

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// readRSS returns the resident memory of the process now and its peak so
// far (VmRSS and VmHWM of /proc/self/status), in bytes.
func readRSS() (rss, peak uint64, err error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0, fmt.Errorf("reading the resident memory: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		name, value, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if !ok {
			continue
		}
		var into *uint64
		switch string(name) {
		case "VmRSS":
			into = &rss
		case "VmHWM":
			into = &peak
		default:
			continue
		}
		kb, err := strconv.ParseUint(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(value), []byte("kB")))), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("reading %s of /proc/self/status: %w", name, err)
		}
		*into = kb << 10
	}
	if rss == 0 || peak == 0 {
		return 0, 0, fmt.Errorf("/proc/self/status has no VmRSS or VmHWM")
	}
	return rss, peak, nil
}
