//go:build !linux

package loadgen

import "errors"

// readLoadAverage returns an error: the load average is only read on
// Linux.
func readLoadAverage() (float64, error) {
	return 0, errors.New("the load average is only read on Linux")
}
