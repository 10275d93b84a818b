package dnsserver

import (
	"errors"
	"net"
	"syscall"
)

// listenAttempts is how many ports Listen tries for an address of port 0
// whose UDP port another process has.
const listenAttempts = 10

// Listen binds addr (HOST:PORT) over TCP and UDP, at one port, for New:
// with port 0, the port TCP got, tried anew a few times when another
// process has it over UDP. It returns the error of the bind that failed.
func Listen(addr string) (net.PacketConn, net.Listener, error) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, nil, err
	}
	for attempt := 1; ; attempt++ {
		tcp, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, nil, err
		}
		udp, err := net.ListenPacket("udp", tcp.Addr().String())
		if err == nil {
			return udp, tcp, nil
		}
		_ = tcp.Close()
		if port != "0" || attempt == listenAttempts || !errors.Is(err, syscall.EADDRINUSE) {
			return nil, nil, err
		}
	}
}
