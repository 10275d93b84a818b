package kinesalitetest

import (
	"fmt"
	"net"
	"syscall"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// LoopbackHTTPClient returns an AWS SDK HTTP client that connects only to
// loopback addresses, for tests of AWS clients: a call that the endpoint
// settings fail to route to an emulator fails at once instead of leaving the
// machine. It is the SDK's buildable client, so that AWS_CA_BUNDLE still
// works with it.
func LoopbackHTTPClient() *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().WithDialerOptions(func(d *net.Dialer) {
		d.Control = loopbackOnly
	})
}

// loopbackOnly refuses a connection to any address but a loopback one,
// before it is made.
func loopbackOnly(network, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("test client dials loopback only, not %s", address)
	}
	return nil
}
