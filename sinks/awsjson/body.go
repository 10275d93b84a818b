package awsjson

import (
	stdbase64 "encoding/base64"
	"slices"
	"sync"

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
