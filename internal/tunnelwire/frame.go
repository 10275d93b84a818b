package tunnelwire

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/sluicehq/sluice/internal/jsonstring"
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
// length as an int64, little-endian, then its JSON, written without
// reflection into a pooled buffer, as every public request and TCP
// connection starts with one.
func WriteProxyHeader(w io.Writer, h ProxyHeader) error {
	bp := headerBuffers.Get().(*[]byte)
	defer headerBuffers.Put(bp)
	b := appendProxyHeader(append((*bp)[:0], 0, 0, 0, 0, 0, 0, 0, 0), h)
	*bp = b
	if len(b)-8 > MaxMessageBytes {
		return ErrTooLarge
	}
	binary.LittleEndian.PutUint64(b, uint64(len(b)-8))
	_, err := w.Write(b)
	return err
}

// headerBuffers are the buffers of WriteProxyHeader.
var headerBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// appendProxyHeader appends the JSON of h, the object encoding/json makes
// of it (TestProxyHeaderJSON holds it to that).
func appendProxyHeader(b []byte, h ProxyHeader) []byte {
	b = append(b, `{"Id":`...)
	b = jsonstring.Append(b, h.ID)
	b = append(b, `,"ClientAddr":`...)
	b = jsonstring.Append(b, h.ClientAddr)
	b = append(b, `,"Proto":`...)
	b = jsonstring.Append(b, h.Proto)
	b = append(b, `,"EdgeType":`...)
	b = jsonstring.Append(b, h.EdgeType)
	b = append(b, `,"PassthroughTLS":`...)
	b = strconv.AppendBool(b, h.PassthroughTLS)
	return append(b, '}')
}
