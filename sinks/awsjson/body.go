package awsjson

import (
	stdbase64 "encoding/base64"
	"slices"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/segmentio/asm/base64"
)

// Buffers is a pool of body buffers, so that a sink's calls reuse the
// memory of its earlier calls' bodies. Its zero value is ready; a nil
// *Buffers allocates a new buffer for each Get. It is safe for concurrent
// use.
type Buffers struct{ pool sync.Pool }

// Get returns an empty buffer, for Put once the call that sent it
// returned.
func (b *Buffers) Get() *[]byte {
	if b != nil {
		if buf, ok := b.pool.Get().(*[]byte); ok {
			return buf
		}
	}
	return new([]byte)
}

// Put returns buf to the pool, emptied. A buffer larger than maxKept is
// dropped instead, so that one exceptional batch does not pin its memory.
func (b *Buffers) Put(buf *[]byte) {
	const maxKept = 8 << 20
	if b == nil || cap(*buf) > maxKept {
		return
	}
	*buf = (*buf)[:0]
	b.pool.Put(buf)
}

// AppendBase64 appends src to dst as a JSON string of its standard base64
// encoding with padding: how the SDK encodes a blob.
func AppendBase64(dst, src []byte) []byte {
	dst = append(dst, '"')
	dst = appendBase64(dst, src)
	return append(dst, '"')
}

// AppendBase64Line appends src and a newline to dst as AppendBase64 would
// append them in one slice, without copying src.
func AppendBase64Line(dst, src []byte) []byte {
	whole := len(src) - len(src)%3 // encoded with no padding
	dst = append(dst, '"')
	dst = appendBase64(dst, src[:whole])
	var tail [3]byte
	n := copy(tail[:], src[whole:])
	tail[n] = '\n'
	// The last 1 to 3 bytes go through encoding/base64, into which tail
	// does not escape (it would into the assembly of appendBase64).
	dst = stdbase64.StdEncoding.AppendEncode(dst, tail[:n+1])
	return append(dst, '"')
}

// appendBase64 appends the standard base64 encoding of src, with padding,
// to dst. It encodes with segmentio/asm's encoder, which uses AVX2 where
// the CPU has it (and encoding/base64's way elsewhere): base64 was an
// eighth of a Kinesis pass-through's CPU with encoding/base64, 1.3 µs of
// an event of 1.8 KB, and is a fifth of that with AVX2. The differential
// tests of the sinks' bodies check that the SDK's decoder reads back src.
func appendBase64(dst, src []byte) []byte {
	n := base64.StdEncoding.EncodedLen(len(src))
	dst = slices.Grow(dst, n)
	base64.StdEncoding.Encode(dst[len(dst):len(dst)+n], src)
	return dst[:len(dst)+n]
}

// AppendString appends s to dst as a JSON string that decodes to s, each
// byte of s that is not UTF-8 as U+FFFD, as the SDK's encoder does.
func AppendString(dst []byte, s string) []byte {
	return AppendText(dst, unsafe.Slice(unsafe.StringData(s), len(s)))
}

// AppendText appends text to dst as a JSON string that decodes to text,
// each byte of text that is not UTF-8 as U+FFFD, as the SDK's encoder
// does. It escapes '"', '\\' and the control characters below U+0020, and
// copies every other byte as it is.
func AppendText(dst, text []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0 // of the bytes of text not yet appended
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, text[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(text[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, text[start:i]...)
			dst = append(dst, "\ufffd"...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, text[start:]...)
	return append(dst, '"')
}
