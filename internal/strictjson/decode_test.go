package strictjson_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/strictjson"
)

// TestDecodeRefusesDeepNesting: a value that takes anything, nested past
// MaxDepth, is refused at once, naming the member where it went too deep;
// at MaxDepth it is taken. A body of a hundred thousand nested arrays
// (200 KB) costs no more than its bytes.
func TestDecodeRefusesDeepNesting(t *testing.T) {
	var v struct {
		Any any `json:"any"`
	}
	nested := func(n int) []byte {
		return []byte(`{"any":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`)
	}
	if err := strictjson.Decode(nested(strictjson.MaxDepth), &v, strictjson.Options{}); err != nil {
		t.Fatalf("nested %d deep: %v", strictjson.MaxDepth, err)
	}
	start := time.Now()
	err := strictjson.Decode(nested(100_000), &v, strictjson.Options{})
	var e *strictjson.Error
	if !errors.As(err, &e) || e.Kind != strictjson.TooDeep || !strings.HasPrefix(e.Member, "any[0][0]") {
		t.Fatalf("nested 100,000 deep: %v, want TooDeep at any[0][0]...", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("refusing it took %v", took)
	}
}
