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

// ReadProxyHeader reads the header that starts a Proxy stream. It refuses
// a length over MaxMessageBytes or under zero.
func ReadProxyHeader(r io.Reader) (ProxyHeader, error) {
	var n int64
	if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
		return ProxyHeader{}, fmt.Errorf("reading the proxy header's length: %w", err)
	}
	if n < 0 || n > MaxMessageBytes {
		return ProxyHeader{}, fmt.Errorf("proxy header of %d bytes: %w", n, ErrTooLarge)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return ProxyHeader{}, fmt.Errorf("reading the proxy header: %w", err)
	}
	var h ProxyHeader
	if err := json.Unmarshal(b, &h); err != nil {
		return ProxyHeader{}, fmt.Errorf("decoding the proxy header: %w", err)
	}
	return h, nil
}
