package strictjson_test

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

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

// TestErrorsQuoteABoundedPart: an error quotes at most MaxEcho bytes of a
// hostile body's member name or number, however long, cut at a
// character.
func TestErrorsQuoteABoundedPart(t *testing.T) {
	var v struct {
		N int8 `json:"n"`
	}
	long := strings.Repeat("é", 10_000)
	for _, tt := range []struct {
		body  string
		field func(*strictjson.Error) string
	}{
		{`{"` + long + `":1}`, func(e *strictjson.Error) string { return e.Member }},
		{`{"n":1` + strings.Repeat("0", 10_000) + `}`, func(e *strictjson.Error) string { return e.Got }},
	} {
		err := strictjson.Decode([]byte(tt.body), &v, strictjson.Options{})
		var e *strictjson.Error
		if !errors.As(err, &e) {
			t.Fatalf("a body of %d bytes: %v, want a *strictjson.Error", len(tt.body), err)
		}
		got := tt.field(e)
		if len(got) > strictjson.MaxEcho+len("…")+len("number ") || !strings.HasSuffix(got, "…") || !utf8.ValidString(got) {
			t.Errorf("the error quotes %d bytes (%.40q…), want at most %d of the body, cut at a character, then …", len(got), got, strictjson.MaxEcho)
		}
	}
}
