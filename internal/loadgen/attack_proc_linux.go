//go:build linux

package loadgen

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the unit of utime and stime in /proc/PID/stat (USER_HZ),
// 100 on every Linux there is.
const clockTicks = 100

// procFigures are what /proc says of a process now.
type procFigures struct {
	rss, peak uint64        // VmRSS and VmHWM, in bytes
	cpu       time.Duration // utime + stime
}

// readProc reads the resident memory and CPU time of process pid; it
// fails when the process is gone or a zombie.
func readProc(pid int) (procFigures, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procFigures{}, fmt.Errorf("process %d: %w", pid, err)
	}
	// The command name, in parentheses, may hold spaces: fields are
	// counted after its closing parenthesis, from the state (field 3).
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return procFigures{}, fmt.Errorf("process %d: /proc/%d/stat has no command name", pid, pid)
	}
	fields := strings.Fields(string(stat[end+1:]))
	if len(fields) < 13 {
		return procFigures{}, fmt.Errorf("process %d: /proc/%d/stat is short", pid, pid)
	}
	if fields[0] == "Z" || fields[0] == "X" {
		return procFigures{}, fmt.Errorf("process %d has exited", pid)
	}
	utime, err1 := strconv.ParseUint(fields[11], 10, 64)
	stime, err2 := strconv.ParseUint(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return procFigures{}, fmt.Errorf("process %d: utime or stime of /proc/%d/stat: %q %q", pid, pid, fields[11], fields[12])
	}
	f := procFigures{cpu: time.Duration(utime+stime) * time.Second / clockTicks}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procFigures{}, fmt.Errorf("process %d: %w", pid, err)
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(value), "kB")), 10, 64)
		if err != nil {
			return procFigures{}, fmt.Errorf("process %d: %s of /proc/%d/status: %w", pid, name, pid, err)
		}
		if name == "VmRSS" {
			f.rss = kb << 10
		} else {
			f.peak = kb << 10
		}
	}
	return f, nil
}

// resetPeak sets the process's VmHWM back to its VmRSS, so that the next
// peak read is of what follows; it reports whether it could (it takes
// permission to write /proc/PID/clear_refs).
func resetPeak(pid int) bool {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil
}
