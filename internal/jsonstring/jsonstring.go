// Package jsonstring appends strings to buffers as JSON strings, without
// reflection or allocation: for the encoders written by hand on hot paths
// (the sinks' request bodies, the edge's events and proxy headers). It is a
// leaf: it imports nothing of sluice's and nothing beyond the standard
// library, so that sluice-agent links it without the server's parts.
package jsonstring

import (
	"unicode/utf8"
	"unsafe"
)

// Append appends s to dst as a JSON string that decodes to s, each byte
// of s that is not UTF-8 as U+FFFD.
func Append(dst []byte, s string) []byte {
	return AppendBytes(dst, unsafe.Slice(unsafe.StringData(s), len(s)))
}

// AppendBytes appends text to dst as a JSON string that decodes to text,
// each byte of text that is not UTF-8 as U+FFFD, as encoding/json and
// the AWS SDK's encoder do. It escapes '"', '\\' and the control characters below U+0020, and
// copies every other byte as it is.
func AppendBytes(dst, text []byte) []byte {
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
