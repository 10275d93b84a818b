package awstest

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
)

// HTTPClient returns an HTTP client for a sink under test: it dials
// loopback addresses only, so that a client the test failed to point at a
// local server fails at once instead of calling AWS; and every connection
// it made is closed when the test ends. It is the SDK's buildable client,
// so that AWS_CA_BUNDLE still works with it.
//
// Closing the connections matters to a server started earlier in the test
// (the emulator): a connection the transport dialed but never used is one
// a server's graceful shutdown waits for, up to seconds, as it cannot tell
// it from one about to carry a request.
func HTTPClient(t testing.TB) *awshttp.BuildableClient {
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	dialer := &net.Dialer{Timeout: 5 * time.Second, Control: emulatortest.LoopbackOnly}
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		conn, err := dialer.DialContext(ctx, network, address)
		if err == nil {
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
		}
		return conn, err
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, conn := range conns {
			conn.Close()
		}
	})
	// The SDK clones the transport (for AWS_CA_BUNDLE, say); the clone
	// keeps DialContext.
	return awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) { tr.DialContext = dial })
}
