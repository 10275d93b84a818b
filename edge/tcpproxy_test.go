package edge

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"testing"

	"golang.ngrok.com/muxado/v2"

	"github.com/sluicehq/sluice/internal/tunnelwire"
)

// BenchmarkMuxadoOverTLS measures the agent connection's transport alone:
// one muxado stream over TLS on loopback, written by one goroutine and
// read to the end by another, with nothing proxied. It is the ceiling of
// a TCP endpoint's bytes a second through the tunnel, at the window the
// agent SDKs use (muxado's default, 256 KiB a stream) and at larger ones
// no SDK asks for. Against it, "loopback" is the same bytes over a plain
// TCP connection: what bench tunnel's direct path is.
func BenchmarkMuxadoOverTLS(b *testing.B) {
	serverTLS, clientTLS := loopbackTLS(b)

	b.Run("loopback", func(b *testing.B) {
		benchmarkStream(b, func(server, client net.Conn) (io.Reader, io.WriteCloser) {
			return server, client.(*net.TCPConn)
		})
	})
	type variant struct {
		window uint32
		whole  bool // the writer's frames through tunnelwire.WholeFrames
	}
	for _, v := range []variant{{256 << 10, false}, {256 << 10, true}, {1 << 20, false}, {4 << 20, false}} {
		window := v.window
		name := fmt.Sprintf("window=%dKiB", window>>10)
		if v.whole {
			name += "/whole-frames"
		}
		b.Run(name, func(b *testing.B) {
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
				var conn net.Conn = tls.Client(client, clientTLS)
				if v.whole {
					conn = tunnelwire.WholeFrames(conn)
				}
				c := muxado.Client(conn, &muxado.Config{MaxWindowSize: window})
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

// loopbackTLS returns the TLS configurations of a server of localhost,
// with a certificate of a new dev CA, and of a client that trusts it.
func loopbackTLS(b *testing.B) (server, client *tls.Config) {
	ca, err := LoadOrCreateDevCA(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	cert, err := ca.Issue("localhost")
	if err != nil {
		b.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.PEM)
	return &tls.Config{Certificates: []tls.Certificate{cert}}, &tls.Config{ServerName: "localhost", RootCAs: roots}
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

// countingConn counts the writes to a connection: over TLS, each is a
// record and a system call.
type countingConn struct {
	net.Conn
	writes atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// BenchmarkMuxadoExchange measures small exchanges on one muxado stream
// over TLS on loopback, as a kept-alive HTTP request and its answer are:
// 128 bytes one way, 128 back, each side's frames whole
// (tunnelwire.WholeFrames, as the edge and sluice-agent write them) or
// as muxado writes them (as the agent SDKs do). writes/op is the TCP
// writes of both sides, each a TLS record and a system call.
func BenchmarkMuxadoExchange(b *testing.B) {
	serverTLS, clientTLS := loopbackTLS(b)
	for _, whole := range []bool{false, true} {
		b.Run(fmt.Sprintf("whole-frames=%v", whole), func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			var counted [2]*countingConn
			wrap := func(i int, c net.Conn) net.Conn {
				counted[i] = &countingConn{Conn: c}
				if whole {
					return tunnelwire.WholeFrames(counted[i])
				}
				return counted[i]
			}
			echoed := make(chan error, 1)
			go func() {
				raw, err := ln.Accept()
				if err != nil {
					echoed <- err
					return
				}
				tc := tls.Server(raw, serverTLS)
				if err := tc.Handshake(); err != nil {
					echoed <- err
					return
				}
				s := muxado.Server(wrap(0, tc), &muxado.Config{})
				defer s.Close()
				st, err := s.AcceptStream()
				if err != nil {
					echoed <- err
					return
				}
				buf := make([]byte, 128)
				for {
					if _, err := io.ReadFull(st, buf); err != nil {
						echoed <- nil
						return
					}
					if _, err := st.Write(buf); err != nil {
						echoed <- err
						return
					}
				}
			}()
			raw, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			tc := tls.Client(raw, clientTLS)
			if err := tc.Handshake(); err != nil {
				b.Fatal(err)
			}
			c := muxado.Client(wrap(1, tc), &muxado.Config{})
			defer c.Close()
			st, err := c.OpenStream()
			if err != nil {
				b.Fatal(err)
			}
			msg, answer := make([]byte, 128), make([]byte, 128)
			before := counted[1].writes.Load()
			for b.Loop() {
				if _, err := st.Write(msg); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(st, answer); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			_ = st.CloseWrite()
			if err := <-echoed; err != nil {
				b.Fatal(err)
			}
			writes := counted[0].writes.Load() + counted[1].writes.Load() - before
			b.ReportMetric(float64(writes)/float64(b.N), "writes/op")
		})
	}
}
