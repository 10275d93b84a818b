package tunnelwire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestProxyHeaderFrame: the header is its JSON's length as an int64,
// little-endian, then the JSON, as agents read it.
func TestProxyHeaderFrame(t *testing.T) {
	var buf bytes.Buffer
	h := ProxyHeader{ID: "bind1", ClientAddr: "203.0.113.9:5000", Proto: "http"}
	if err := WriteProxyHeader(&buf, h); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := binary.Read(&buf, binary.LittleEndian, &n); err != nil || n != int64(buf.Len()) {
		t.Fatalf("length %d (%v), want the %d bytes that follow", n, err, buf.Len())
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"Id": "bind1", "ClientAddr": "203.0.113.9:5000", "Proto": "http", "EdgeType": "", "PassthroughTLS": false} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v", k, got[k], want)
		}
	}
}

// FuzzProxyHeaderJSON: the JSON WriteProxyHeader writes decodes to the
// header it was given, as encoding/json's does, whatever the strings
// hold (quotes, control characters, invalid UTF-8).
func FuzzProxyHeaderJSON(f *testing.F) {
	f.Add("ep_2", "203.0.113.9:5000", "http", "", false)
	f.Add("a\"b\\c", "\x00\x1f\u2028", "t\xffcp", "https", true)
	f.Fuzz(func(t *testing.T, id, client, proto, edgeType string, passthrough bool) {
		h := ProxyHeader{ID: id, ClientAddr: client, Proto: proto, EdgeType: edgeType, PassthroughTLS: passthrough}
		var got, want ProxyHeader
		if err := json.Unmarshal(appendProxyHeader(nil, h), &got); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, appendProxyHeader(nil, h))
		}
		ref, _ := json.Marshal(h)
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("decoded %+v, encoding/json's decodes to %+v", got, want)
		}
	})
}

// BenchmarkWriteProxyHeader: a request's header costs no allocation.
func BenchmarkWriteProxyHeader(b *testing.B) {
	h := ProxyHeader{ID: "ep_36Tq0cK1dxKzVYnQpS2ysWQGfYU", ClientAddr: "203.0.113.9:50000", Proto: "http"}
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteProxyHeader(io.Discard, h); err != nil {
			b.Fatal(err)
		}
	}
}

// TestReadMessageBounds: a message is read without waiting for the end
// of the stream, and one over MaxMessageBytes is refused.
func TestReadMessageBounds(t *testing.T) {
	var b Bind
	if err := ReadMessage(strings.NewReader(`{"Id":"x","Proto":"http"} and more`), &b); err != nil || b.ID != "x" {
		t.Fatalf("ReadMessage: %+v, %v", b, err)
	}
	big := `{"Id":"` + strings.Repeat("a", MaxMessageBytes) + `"}`
	if err := ReadMessage(strings.NewReader(big), &b); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a message over the limit: %v, want ErrTooLarge", err)
	}
}

// TestSecretIsHidden: an authtoken never shows when formatted.
func TestSecretIsHidden(t *testing.T) {
	a := AuthExtra{Authtoken: "ct_secret"}
	if s := a.Authtoken.String(); s != "HIDDEN" || a.Authtoken.LogValue().String() != "HIDDEN" || a.Authtoken.Plain() != "ct_secret" {
		t.Fatalf("String %q", s)
	}
}
