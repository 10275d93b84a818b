// Package agenttest holds what the tests that run the Go agent SDK in
// their own process share.
package agenttest

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"

	"golang.ngrok.com/ngrok/v2"
)

// DialOnce is the option of a test's agent that connects only once (see
// OneConnection).
func DialOnce(t testing.TB) ngrok.AgentOption {
	t.Helper()
	return ngrok.WithDialer(&OneConnection{})
}

// OneConnection is a dialer (ngrok.WithDialer) that lets an agent connect
// once: its reconnects fail at the dial. A test that ends an agent's
// session from the edge (a deleted credential) keeps the agent from
// reconnecting with it: muxado v2.0.2, under the SDK, races when a
// session dies in the middle of a stream's write (writeFrame returns on
// the dead session while the session's writer still encrypts the
// stream's frame buffer, and the stream packs its closing frame into it),
// which a reconnect refused by the edge, or ended by the test, can hit
// under the race detector.
type OneConnection struct {
	mu     sync.Mutex
	dialed bool
	d      net.Dialer
}

// ErrOnlyOnce is the error of every dial after the first.
var ErrOnlyOnce = errors.New("agenttest: this agent connects only once")

// Dial dials address the first time, and fails after.
func (o *OneConnection) Dial(network, address string) (net.Conn, error) {
	return o.DialContext(context.Background(), network, address)
}

// DialContext dials address the first time, and fails after.
func (o *OneConnection) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dialed {
		return nil, ErrOnlyOnce
	}
	o.dialed = true
	return o.d.DialContext(ctx, network, address)
}
