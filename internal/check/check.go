package check

import (
	"strings"
	"testing"
)

// ErrorContains fails the test unless err is nil when want is "", or err
// says want.
func ErrorContains(t testing.TB, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Fatalf("error = %v, want one containing %q", err, want)
	}
}
