//go:build !linux

package loadgen

import (
	"errors"
	"time"
)

// procFigures are what the system says of a process now.
type procFigures struct {
	rss, peak uint64
	cpu       time.Duration
}

// readProc is only for Linux, whose /proc it reads.
func readProc(int) (procFigures, error) {
	return procFigures{}, errors.New("the resident memory and CPU time of another process are read on Linux only")
}

func resetPeak(int) bool { return false }
