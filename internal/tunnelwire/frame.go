package tunnelwire

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MaxMessageBytes is the largest message of a call, request or response,
// and the largest ProxyHeader: a Bind with a traffic policy fits well
// within it.
const MaxMessageBytes = 64 << 10

// ErrTooLarge is returned for a message over MaxMessageBytes.
var ErrTooLarge = errors.New("message over 64 KiB")

// ReadMessage decodes the one JSON message of a call from r into v,
// reading at most MaxMessageBytes. The caller does not wait for the end
// of the stream: agents keep it open for the answer.
func ReadMessage(r io.Reader, v any) error {
	lr := &io.LimitedReader{R: r, N: MaxMessageBytes + 1}
	if err := json.NewDecoder(lr).Decode(v); err != nil {
		if lr.N <= 0 {
			return ErrTooLarge
		}
		return fmt.Errorf("decoding the message: %w", err)
	}
	return nil
}

// WriteMessage writes v as the one JSON message of a call.
func WriteMessage(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding the message: %w", err)
	}
	if len(b) > MaxMessageBytes {
		return ErrTooLarge
	}
	_, err = w.Write(b)
	return err
}

// WriteProxyHeader writes the header that starts a Proxy stream: its
// length as an int64, little-endian, then its JSON.
func WriteProxyHeader(w io.Writer, h ProxyHeader) error {
	b, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("encoding the proxy header: %w", err)
	}
	frame := binary.LittleEndian.AppendUint64(make([]byte, 0, 8+len(b)), uint64(len(b)))
	_, err = w.Write(append(frame, b...))
	return err
}
