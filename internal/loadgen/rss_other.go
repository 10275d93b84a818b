//go:build !linux

package loadgen

import "errors"

// readRSS fails: the resident memory is only read on Linux.
func readRSS() (rss, peak uint64, err error) {
	return 0, 0, errors.New("the resident memory is only read on Linux")
}
