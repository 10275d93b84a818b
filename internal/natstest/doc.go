// Package natstest starts a real, embedded NATS server with JetStream for
// tests, and connects to it, with cleanup registered on the test.
//
// It is for tests only; production code starts its server with package
// natsserver.
package natstest
