package awsjson

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"testing"
)

// FuzzAppendBase64 checks that AppendBase64Line appends the base64 of the
// text and a newline as a JSON string, and AppendBase64 the text's.
func FuzzAppendBase64(f *testing.F) {
	for _, seed := range []string{"", `"`, "\x00\x1f\x7f", "é日本🚀", "\xff\xfe\xc3", `{"a":"b\"c"}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		prefix := []byte("x")
		line := AppendBase64Line(bytes.Clone(prefix), text)
		var blob []byte // encoding/json reads a JSON string as base64
		if err := json.Unmarshal(line[1:], &blob); err != nil {
			t.Fatalf("AppendBase64Line(%q) = %q: %v", text, line, err)
		}
		if want := append(bytes.Clone(text), '\n'); !bytes.Equal(blob, want) {
			t.Errorf("AppendBase64Line(%q) decodes to %q", text, blob)
		}
		if got, want := AppendBase64(nil, text), `"`+base64.StdEncoding.EncodeToString(text)+`"`; string(got) != want {
			t.Errorf("AppendBase64(%q) = %s, want %s", text, got, want)
		}
	})
}

// TestAppendBase64MatchesStdlib checks the AVX2 encoder of AppendBase64
// and AppendBase64Line against encoding/base64 on every length up to a few
// of its 32-byte blocks, appending after what dst holds.
func TestAppendBase64MatchesStdlib(t *testing.T) {
	src := make([]byte, 300)
	for i := range src {
		src[i] = byte(i*151 + i>>3)
	}
	for n := range len(src) + 1 {
		s := src[:n]
		want := `x"` + base64.StdEncoding.EncodeToString(s) + `"`
		if got := AppendBase64([]byte("x"), s); string(got) != want {
			t.Fatalf("AppendBase64 of %d bytes: %s, want %s", n, got, want)
		}
		line := append(bytes.Clone(s), '\n')
		want = `x"` + base64.StdEncoding.EncodeToString(line) + `"`
		if got := AppendBase64Line([]byte("x"), s); string(got) != want {
			t.Fatalf("AppendBase64Line of %d bytes: %s, want %s", n, got, want)
		}
	}
}

// BenchmarkAppendBase64 measures encoding a record of 1.8 KB, the size of
// an http_request_complete.v0 event, with AppendBase64 and with
// encoding/base64's AppendEncode, which it replaced.
func BenchmarkAppendBase64(b *testing.B) {
	record := bytes.Repeat([]byte(`{"key":"value","n":12345,"é":"日本"},`), 45) // 1,800 bytes
	buf := make([]byte, 0, 4096)
	b.Run("awsjson", func(b *testing.B) {
		b.SetBytes(int64(len(record)))
		for b.Loop() {
			buf = AppendBase64(buf[:0], record)
		}
	})
	b.Run("encoding/base64", func(b *testing.B) {
		b.SetBytes(int64(len(record)))
		for b.Loop() {
			buf = base64.StdEncoding.AppendEncode(buf[:0], record)
		}
	})
}
