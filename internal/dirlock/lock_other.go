//go:build !unix

package dirlock

import "os"

// tryLock does not lock on systems without flock: the directory is not
// guarded there.
func tryLock(*os.File) error { return nil }
