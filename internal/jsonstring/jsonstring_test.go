package jsonstring

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzAppend checks that AppendBytes appends valid JSON that decodes to
// the text, each byte that is not UTF-8 as U+FFFD, and that Append
// appends the same.
func FuzzAppend(f *testing.F) {
	for _, seed := range []string{"", `"`, `\`, "\x00\x1f\x7f", "\u2028\u2029", "é日本🚀", "\xff\xfe\xc3", `{"a":"b\"c"}`, "a\nb\r\tc"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		prefix := []byte("x")
		encoded := AppendBytes(bytes.Clone(prefix), text)
		if !bytes.HasPrefix(encoded, prefix) || !json.Valid(encoded[1:]) {
			t.Fatalf("AppendBytes(%q) = %q, not the prefix and a JSON string", text, encoded)
		}
		var got string
		if err := json.Unmarshal(encoded[1:], &got); err != nil {
			t.Fatal(err)
		}
		if want := validUTF8(text); got != want {
			t.Errorf("AppendBytes(%q) decodes to %q, want %q", text, got, want)
		}
		if s := Append(nil, string(text)); !bytes.Equal(s, encoded[1:]) {
			t.Errorf("Append(%q) = %q, AppendBytes %q", text, s, encoded[1:])
		}
	})
}

// validUTF8 returns text with each byte that is not UTF-8 as U+FFFD.
func validUTF8(text []byte) string {
	var out []rune
	for len(text) > 0 {
		r, size := utf8.DecodeRune(text)
		out = append(out, r)
		text = text[size:]
	}
	return string(out)
}

// BenchmarkAppendBytes measures escaping an envelope of about 1.8 KB.
func BenchmarkAppendBytes(b *testing.B) {
	envelope := bytes.Repeat([]byte(`{"key":"value","n":12345,"é":"日本"},`), 50)
	buf := make([]byte, 0, 4096)
	b.SetBytes(int64(len(envelope)))
	for b.Loop() {
		buf = AppendBytes(buf[:0], envelope)
	}
}
