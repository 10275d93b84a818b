package tunnelwire

import (
	"net"
	"sync"
)

// The frame header of muxado (golang.ngrok.com/muxado/v2/frame): the
// body's length in 3 bytes, big-endian, then the type and flags, then
// the stream id, 8 bytes in all.
const (
	frameHeaderBytes = 8
	// maxHeldBytes is the most of a frame WholeFrames holds between two
	// writes: a header with GOAWAY's fixed body, the longest muxado
	// writes before a frame's variable part.
	maxHeldBytes = 16
	// recordBytes is the most plaintext one TLS record carries.
	recordBytes = 16 << 10
)

// WholeFrames returns conn with writes of a muxado session's frames
// merged: muxado writes a DATA frame's 8-byte header and its body in two
// writes, and over TLS each write is a record and a system call of its
// own, so a small frame costs two of each. The returned conn holds a
// header whose body is still to come and writes it with the body's
// first bytes (up to a TLS record's worth) in one write; other writes
// pass through. It reads, closes and sets deadlines as conn does.
//
// It relies on muxado's writer writing each frame's header and then the
// rest of that frame, before any other frame: its one writer goroutine
// does. A write that does not continue the held frame as its header said
// is written as it is, after what was held.
func WholeFrames(conn net.Conn) net.Conn { return &wholeFrames{Conn: conn} }

// SessionConn returns conn as the edge and sluice-agent run a muxado
// session on it: through WholeFrames, except in a build with the race
// detector.
//
// muxado reuses a stream's frame for the stream's next write once
// writeFrame returned, and writeFrame returns on a dead session or a
// write deadline without waiting for its writer goroutine, which may
// still be reading the frame: a race of muxado's own. tls.Conn reads
// the frame in assembly, which the race detector does not see;
// WholeFrames copies the header in Go, which it does, so that every test
// whose session ends beside a stream's close would report muxado's
// race. The tests of WholeFrames run it under the detector all the same.
func SessionConn(conn net.Conn) net.Conn {
	if raceDetector {
		return conn
	}
	return WholeFrames(conn)
}

type wholeFrames struct {
	net.Conn
	mu   sync.Mutex
	held [maxHeldBytes]byte
	n    int // bytes held
	want int // bytes of the held frame still to come
}

// Write writes p, or holds it when it is a frame's start whose rest is
// still to come.
func (w *wholeFrames) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == 0 {
		if len(p) == 0 {
			return 0, nil // muxado's empty bodies: no record, no system call
		}
		if len(p) < frameHeaderBytes || len(p) > maxHeldBytes {
			return w.Conn.Write(p)
		}
		total := frameHeaderBytes + (int(p[0])<<16 | int(p[1])<<8 | int(p[2]))
		if len(p) >= total {
			return w.Conn.Write(p)
		}
		w.n = copy(w.held[:], p)
		w.want = total - len(p)
		return len(p), nil
	}
	if len(p) != w.want {
		// Not the rest muxado's header announced: keep the order.
		if err := w.flushHeld(); err != nil {
			return 0, err
		}
		return w.Conn.Write(p)
	}
	bp := recordBuffers.Get().(*[]byte)
	defer recordBuffers.Put(bp)
	first := min(len(p), recordBytes-w.n)
	buf := append(append((*bp)[:0], w.held[:w.n]...), p[:first]...)
	w.n, w.want = 0, 0
	if _, err := w.Conn.Write(buf); err != nil {
		return 0, err
	}
	if first == len(p) {
		return len(p), nil
	}
	n, err := w.Conn.Write(p[first:])
	return first + n, err
}

// flushHeld writes what is held.
func (w *wholeFrames) flushHeld() error {
	held := w.held[:w.n]
	w.n, w.want = 0, 0
	_, err := w.Conn.Write(held)
	return err
}

// recordBuffers are WholeFrames' buffers of one TLS record, taken for
// the length of one write: a session holds none while idle.
var recordBuffers = sync.Pool{New: func() any { b := make([]byte, 0, recordBytes); return &b }}
