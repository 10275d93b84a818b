// Package atomicfile writes a file whole or not at all: through a
// temporary file in the same directory, given its mode before any byte,
// synced, and renamed over the file. A crash leaves the old file or the
// new one, never half of one. It is a leaf, which the small agent links as
// the server does.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces the file at path with data, of mode perm.
func Write(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	// After the rename there is nothing left to remove, and the error
	// says only that.
	defer os.Remove(f.Name())
	if err := f.Chmod(perm); err != nil {
		_ = f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
