// Package buildtest builds the commands that tests run as processes, each
// once per test binary, or once per run of every package's tests when the
// run built them beforehand (BinariesEnv), and clears the environment they
// read.
package buildtest

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// BinariesEnv names the variable of the environment that, when set, is a
// directory of commands built for this run (make test builds them there
// with one go build before go test starts): Binary takes a command from it
// rather than building it again in each test binary, as the packages' test
// binaries run side by side. A command the directory lacks is built. The
// name does not start with SLUICE_, which tests clear (ClearEnv).
const BinariesEnv = "BUILDTEST_BINARIES"

// built holds what Binary built, by package.
var built struct {
	mu   sync.Mutex
	dir  string
	bins map[string]*binary
}

type binary struct {
	once sync.Once
	path string
	out  []byte
	err  error
}

// Binary returns the path of the command of package pkg (an import path,
// or a directory such as ".", as go build takes it): the one of the
// directory BinariesEnv names, if it holds it, or else one built on the
// first call for pkg into a directory that Cleanup removes: call it from
// TestMain after m.Run.
func Binary(t testing.TB, pkg string) string {
	t.Helper()
	if dir := os.Getenv(BinariesEnv); dir != "" {
		bin := filepath.Join(dir, commandName(pkg))
		if info, err := os.Stat(bin); err == nil && info.Mode().IsRegular() {
			return bin
		}
	}
	built.mu.Lock()
	if built.dir == "" {
		dir, err := os.MkdirTemp("", "sluice-test-bin-")
		if err != nil {
			built.mu.Unlock()
			t.Fatal(err)
		}
		built.dir = dir
		built.bins = make(map[string]*binary)
	}
	b, ok := built.bins[pkg]
	if !ok {
		// The binary has the command's name (a README's blocks call
		// sluice by it), in a directory of its own.
		b = &binary{path: filepath.Join(built.dir, strconv.Itoa(len(built.bins)), commandName(pkg))}
		built.bins[pkg] = b
	}
	built.mu.Unlock()
	b.once.Do(func() {
		if b.err = os.MkdirAll(filepath.Dir(b.path), 0o755); b.err != nil {
			return
		}
		b.out, b.err = exec.Command("go", "build", "-o", b.path, pkg).CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, b.err, b.out)
	}
	return b.path
}

// commandName is the name go build gives the command of pkg: the last
// element of its path, or of the one before a major version suffix (v2),
// and for "." the working directory's name.
func commandName(pkg string) string {
	name := path.Base(pkg)
	if name == "." {
		if wd, err := os.Getwd(); err == nil {
			name = filepath.Base(wd)
		}
	}
	if len(name) > 1 && name[0] == 'v' && strings.Trim(name[1:], "0123456789") == "" && path.Dir(pkg) != "." {
		name = path.Base(path.Dir(pkg))
	}
	return name
}

// Cleanup removes what Binary built.
func Cleanup() {
	built.mu.Lock()
	defer built.mu.Unlock()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
		built.dir, built.bins = "", nil
	}
}

// ClearEnv unsets, for the test, every variable of the environment whose
// name starts with prefix (such as "SLUICE_"), so that a process the test
// starts reads only what the test gives it.
func ClearEnv(t *testing.T, prefix string) {
	t.Helper()
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, prefix) {
			t.Setenv(name, "") // restores the variable after the test
			if err := os.Unsetenv(name); err != nil {
				t.Fatal(err)
			}
		}
	}
}
