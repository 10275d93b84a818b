package edge

import (
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
		n, _ := io.Copy(st, c)
		in.Add(n)
		_ = st.CloseWrite()
	})
	n, _ := io.Copy(c, st)
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
	e.publishTCP(ep, c, start, e.now(), in.Load(), out.Load())
}
