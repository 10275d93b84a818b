package edge

import (
	"io"
	"net/http"
	"sync"

	"github.com/coder/websocket"
)

// maxConvertedMessage bounds one WebSocket message a route's converter
// takes: messages are streamed through, never held whole, so the bound
// is against a client that never ends one, not against memory.
const maxConvertedMessage = 64 << 20

// convertWebSocket serves a request of a route with the websocket TCP
// converter (spec 2.6): it accepts the WebSocket itself, opens a stream
// to the exchange's tunnel that says "tcp", and carries the payloads of
// the client's binary messages to it as raw bytes, and the tunnel's
// bytes back as binary messages, until either side ends. A request that
// is not a WebSocket upgrade gets 400. As any WebSocket server should,
// it takes upgrades from pages of the route's own origin only: a page
// elsewhere cannot open one with a visitor's cookies.
func (x *exchange) convertWebSocket(w http.ResponseWriter) {
	r := x.req
	if !headerHasToken(r.Header, "Connection", "upgrade") || !headerHasToken(r.Header, "Upgrade", "websocket") {
		x.status = http.StatusBadRequest
		publicError(w, http.StatusBadRequest, codeNotWebSocket, "This route takes WebSocket connections only: its websocket TCP converter carries their messages to a TCP service.")
		return
	}
	bc := x.openBackend("tcp")
	if bc == nil {
		x.status, x.upstreamFailed = http.StatusBadGateway, true
		publicError(w, http.StatusBadGateway, codeAgentGone, "The agent serving this route's tunnel could not be reached. Try again shortly.")
		return
	}
	defer bc.close()
	sw := &policyWriter{ResponseWriter: w} // for the status of a refusal
	c, err := websocket.Accept(sw, r, nil)
	if err != nil {
		// Accept answered the client (400 or 403, and why).
		x.status = sw.status
		return
	}
	x.status, x.hijacked = http.StatusSwitchingProtocols, true
	// The hijack gave back the connection's count of the account's
	// connections: the WebSocket counts again while it lasts.
	if !x.edge.openConn(x.account) {
		x.edge.Metrics.connLimited.Add(1)
		_ = c.Close(websocket.StatusTryAgainLater, "the account has as many connections open as it may")
		return
	}
	defer x.edge.closeConn(x.account)
	c.SetReadLimit(maxConvertedMessage)
	conn := websocket.NetConn(r.Context(), c, websocket.MessageBinary)
	defer conn.Close()
	var wg sync.WaitGroup
	wg.Go(func() {
		n, _ := io.Copy(bc.stream, conn)
		x.reqBytes += n
		// A WebSocket ends whole: the tunnel's side ends with it.
		_ = bc.stream.Close()
	})
	bp := x.edge.streamBuffers.Get().(*[]byte)
	n, _ := io.CopyBuffer(conn, bc.br, *bp)
	x.edge.streamBuffers.Put(bp)
	x.respBytes += n
	_ = conn.Close()
	wg.Wait()
}
