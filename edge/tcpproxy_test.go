package edge

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"testing"

	"golang.ngrok.com/muxado/v2"
)

// BenchmarkMuxadoOverTLS measures the agent connection's transport alone:
// one muxado stream over TLS on loopback, written by one goroutine and
// read to the end by another, with nothing proxied. It is the ceiling of
// a TCP endpoint's bytes a second through the tunnel, at the window the
// agent SDKs use (muxado's default, 256 KiB a stream) and at larger ones
// no SDK asks for. Against it, "loopback" is the same bytes over a plain
// TCP connection: what bench tunnel's direct path is.
func BenchmarkMuxadoOverTLS(b *testing.B) {
	ca, err := LoadOrCreateDevCA(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	cert, err := ca.Issue("localhost")
	if err != nil {
		b.Fatal(err)
	}
	serverTLS := &tls.Config{Certificates: []tls.Certificate{cert}}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.PEM)
	clientTLS := &tls.Config{ServerName: "localhost", RootCAs: roots}

	b.Run("loopback", func(b *testing.B) {
		benchmarkStream(b, func(server, client net.Conn) (io.Reader, io.WriteCloser) {
			return server, client.(*net.TCPConn)
		})
	})
	for _, window := range []uint32{256 << 10, 1 << 20, 4 << 20} {
		b.Run(fmt.Sprintf("window=%dKiB", window>>10), func(b *testing.B) {
			benchmarkStream(b, func(server, client net.Conn) (io.Reader, io.WriteCloser) {
				accepted := make(chan muxado.Stream, 1)
				go func() {
					s := muxado.Server(tls.Server(server, serverTLS), &muxado.Config{MaxWindowSize: window})
					st, err := s.AcceptStream()
					if err != nil {
						close(accepted)
						return
					}
					accepted <- st
				}()
				c := muxado.Client(tls.Client(client, clientTLS), &muxado.Config{MaxWindowSize: window})
				st, err := c.OpenStream()
				if err != nil {
					b.Fatal(err)
				}
				// The stream reaches the server with its first bytes.
				if _, err := st.Write([]byte{0}); err != nil {
					b.Fatal(err)
				}
				in, ok := <-accepted
				if !ok {
					b.Fatal("no stream accepted")
				}
				if _, err := io.ReadFull(in, make([]byte, 1)); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = c.Close() })
				return in, halfCloser{st}
			})
		})
	}
}

// halfCloser closes a muxado stream's writing half only, as a TCP
// connection's CloseWrite does.
type halfCloser struct{ muxado.Stream }

func (h halfCloser) Close() error { return h.CloseWrite() }

// benchmarkStream writes b.N chunks of streamBufferSize through the
// reader and writer that wrap a loopback TCP connection's two ends, and
// reads them to the end on the other side.
func benchmarkStream(b *testing.B, wrap func(server, client net.Conn) (io.Reader, io.WriteCloser)) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	server, ok := <-accepted
	if !ok {
		b.Fatal("no connection accepted")
	}
	defer server.Close()
	r, w := wrap(server, client)

	chunk := make([]byte, streamBufferSize)
	b.SetBytes(int64(len(chunk)))
	read := make(chan int64, 1)
	b.ResetTimer()
	go func() {
		n, _ := io.CopyBuffer(io.Discard, struct{ io.Reader }{r}, make([]byte, streamBufferSize))
		read <- n
	}()
	for range b.N {
		if _, err := w.Write(chunk); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	if n := <-read; n != int64(b.N)*int64(len(chunk)) {
		b.Fatalf("read %d bytes, want %d", n, int64(b.N)*int64(len(chunk)))
	}
}
