package tunnelwire

import (
	"bytes"
	"io"
	"net"
	"sync"
	"testing"

	"golang.ngrok.com/muxado/v2"
)

// loneHeaders is a conn that follows the frames written to it and
// counts the writes that are a frame's header alone, its body still to
// come. muxado writes each header in one piece.
type loneHeaders struct {
	net.Conn
	mu     sync.Mutex
	writes int
	lone   int
	rest   int // bytes of the current frame still to come
}

func (c *loneHeaders) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.writes++
	if c.rest == 0 && len(p) == frameHeaderBytes && int(p[0])<<16|int(p[1])<<8|int(p[2]) > 0 {
		c.lone++
	}
	for i := 0; i < len(p); {
		if c.rest == 0 {
			c.rest = frameHeaderBytes + (int(p[i])<<16 | int(p[i+1])<<8 | int(p[i+2]))
		}
		took := min(c.rest, len(p)-i)
		c.rest -= took
		i += took
	}
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// TestWholeFramesMergesHeaders: through WholeFrames, a muxado session's
// streams carry their bytes unchanged, of every size (empty, under a
// record, a record, several), and no frame's header goes out alone;
// without it, muxado writes them alone.
func TestWholeFramesMergesHeaders(t *testing.T) {
	for _, whole := range []bool{false, true} {
		clientEnd, serverEnd := net.Pipe()
		counted := &loneHeaders{Conn: clientEnd}
		var conn net.Conn = counted
		if whole {
			conn = WholeFrames(counted)
		}
		client := muxado.Client(conn, &muxado.Config{})
		server := muxado.Server(serverEnd, &muxado.Config{})
		sizes := []int{1, 7, 8, 9, 100, recordBytes - 9, recordBytes - 8, recordBytes, 3*recordBytes + 5, 200 << 10}
		received := make(chan []byte, len(sizes))
		var wg sync.WaitGroup
		wg.Go(func() {
			for range sizes {
				st, err := server.AcceptStream()
				if err != nil {
					t.Error(err)
					return
				}
				b, err := io.ReadAll(st)
				if err != nil {
					t.Error(err)
				}
				received <- b
				_ = st.Close()
			}
		})
		for i, n := range sizes {
			st, err := client.OpenStream()
			if err != nil {
				t.Fatal(err)
			}
			sent := bytes.Repeat([]byte{byte(i + 1)}, n)
			if _, err := st.Write(sent); err != nil {
				t.Fatal(err)
			}
			if err := st.CloseWrite(); err != nil {
				t.Fatal(err)
			}
			if got := <-received; !bytes.Equal(got, sent) {
				t.Fatalf("whole=%v: stream %d carried %d bytes, want the %d sent", whole, i, len(got), n)
			}
		}
		wg.Wait()
		_ = client.Close()
		_ = server.Close()
		counted.mu.Lock()
		lone, writes := counted.lone, counted.writes
		counted.mu.Unlock()
		if whole && lone != 0 {
			t.Errorf("with WholeFrames, %d of %d writes were a header alone", lone, writes)
		}
		if !whole && lone == 0 {
			t.Errorf("without WholeFrames, no header went alone in %d writes: the test no longer sees muxado's writes", writes)
		}
	}
}

// TestWholeFramesKeepsOrder: a write that does not continue the held
// frame goes out after what was held, both whole.
func TestWholeFramesKeepsOrder(t *testing.T) {
	clientEnd, serverEnd := net.Pipe()
	w := WholeFrames(clientEnd)
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(serverEnd)
		got <- b
	}()
	header := []byte{0, 0, 5, 0x10, 0, 0, 0, 1} // DATA, 5 bytes to come
	for _, p := range [][]byte{header, []byte("abc"), header, []byte("hello")} {
		if n, err := w.Write(p); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	_ = w.Close()
	want := append(append(append(append([]byte{}, header...), "abc"...), header...), "hello"...)
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("wrote %q, want %q", b, want)
	}
}
