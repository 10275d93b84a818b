package tunnelwire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
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
