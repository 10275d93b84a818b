// Package natsserver runs an embedded NATS server with JetStream inside the
// sluice process: the server `sluice serve` starts when no external NATS URL
// is given, and the one tests and benchmarks run against.
//
// The server stores JetStream's files under Config.DataDir, encrypted when
// Config.Key is set (a key ReadKeyFile reads; Start refuses another with
// ErrWrongKey), listens for clients only when Config.Listen asks it to,
// and then only on loopback (it has no TLS), and logs nothing unless given
// a *slog.Logger. Clients in the same process connect with
// (*Server).Connect, which needs no listener.
//
// Every client authenticates as one of three NATS users (Identity), each an
// NKey whose seed the server writes under Config.DataDir/nats (SeedFile,
// mode 600) at its first start: IdentitySluice for sluice's own processes
// and CLI, IdentityProducer for services publishing events, IdentityEdge
// for the edge. Permissions says what each may do; only sluice's may read
// the store or use JetStream's API.
// A StorageWatch says whether JetStream's store takes writes, and restarts
// JetStream once space returns after a full disk.
//
// It is not for running a NATS cluster: past one machine, sluice connects to
// an external NATS JetStream cluster instead, and this package is not used.
package natsserver
