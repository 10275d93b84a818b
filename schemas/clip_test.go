package schemas_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sluicehq/sluice/schemas"
)

// TestClip keeps a short value whole and cuts a long one to 64 bytes of
// valid UTF-8, even where byte 64 falls inside a character.
func TestClip(t *testing.T) {
	if got := schemas.Clip("ac_short"); got != "ac_short" {
		t.Fatalf("Clip of a short value = %q", got)
	}
	long := strings.Repeat("a", 63) + "é" + strings.Repeat("b", 100)
	got := schemas.Clip(long)
	if got != strings.Repeat("a", 63)+"..." || !utf8.ValidString(got) {
		t.Fatalf("Clip of a long value = %q, want 63 a's and ...", got)
	}
}
