package edge

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.ngrok.com/muxado/v2"

	"github.com/sluicehq/sluice/internal/tunnelwire"
)

// tcpHalfCloseGrace is how long a public TCP connection may go on sending
// once the agent's side has closed.
const tcpHalfCloseGrace = 10 * time.Second

// streamBufferSize is how much of a TCP connection is copied at once:
// each read toward the agent becomes one muxado frame, whose 8-byte
// header and body then fill four TLS records exactly, where the 32 KiB
// of io.Copy took three records, the last of 8 bytes, and half the
// frames. Through the tunnel it carried about 4% more bytes a second
// (bench tunnel, a median of 430 against 412 MiB/s over four alternating
// runs); the agent SDKs' muxado window of 256 KiB a stream bounds it
// (docs/performance.md, BenchmarkMuxadoOverTLS).
const streamBufferSize = 4*16384 - 8

// serveTCP accepts the public connections of a TCP endpoint until its
// listener closes.
func (e *Edge) serveTCP(ep *endpoint) {
	var conns sync.WaitGroup
	defer conns.Wait()
	for {
		c, err := ep.listener.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		conns.Go(func() { e.proxyTCP(ep, c) })
	}
}

// proxyTCP joins a public TCP connection and a stream to the endpoint's
// agent, and reports the connection when it closes.
func (e *Edge) proxyTCP(ep *endpoint, c net.Conn) {
	defer c.Close()
	start := e.now()
	var record *policyRecord
	if ep.policy != nil {
		record = &policyRecord{}
		if !ep.policy.Connect(context.WithValue(e.ctx, policyRecordKey{}, record), c.RemoteAddr().String()) {
			e.publishTCP(ep, c, start, e.now(), 0, 0, record)
			return
		}
	}
	account := ep.record.AccountID
	if !e.openConn(account) {
		e.Metrics.connLimited.Add(1)
		return
	}
	defer e.closeConn(account)
	st, err := ep.session.mux.OpenTypedStream(muxado.StreamType(tunnelwire.CallProxy))
	if err != nil {
		e.Metrics.upstreamFailed.Add(1)
		return
	}
	defer st.Close()
	if err := tunnelwire.WriteProxyHeader(st, tunnelwire.ProxyHeader{ID: ep.bindID, ClientAddr: c.RemoteAddr().String(), Proto: "tcp"}); err != nil {
		e.Metrics.upstreamFailed.Add(1)
		return
	}
	// The session ending ends the stream, and with it both copies.
	var in, out atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		n, _ := e.copyStream(st, c)
		in.Add(n)
		_ = st.CloseWrite()
	})
	n, _ := e.copyStream(c, st)
	out.Add(n)
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	// The agent's side is done: the client has a grace to finish sending,
	// and a client that neither sends nor closes does not hold the
	// connection.
	_ = c.SetReadDeadline(time.Now().Add(tcpHalfCloseGrace))
	wg.Wait()
	e.Metrics.tcpBytesIn.Add(float64(in.Load()))
	e.Metrics.tcpBytesOut.Add(float64(out.Load()))
	e.publishTCP(ep, c, start, e.now(), in.Load(), out.Load(), record)
}

// copyStream copies src to dst through a buffer of streamBufferSize, never
// through src's WriteTo or dst's ReadFrom (a TCP connection's use 32 KiB).
func (e *Edge) copyStream(dst io.Writer, src io.Reader) (int64, error) {
	buf := e.streamBuffers.Get().(*[]byte)
	defer e.streamBuffers.Put(buf)
	return io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{src}, *buf)
}
