//go:build !unix

package emulator

import "os"

// tryLock does not lock on systems without flock: the state directory is
// not guarded there.
func tryLock(*os.File) error { return nil }
