//go:build !unix

package main

import "os"

// tryLock does not lock on systems without flock: the data directory is
// not guarded there.
func tryLock(*os.File) error { return nil }
