package main

import (
	"errors"

	"github.com/nats-io/nats.go"
)

// natsSecurity says how to authenticate to an external NATS server and
// verify it: the --nats-creds and --nats-tls-* flags that serve and
// accounts share.
type natsSecurity struct {
	creds   string // --nats-creds: credentials file, JWT and NKey seed
	tlsCA   string // --nats-tls-ca: CA certificate file
	tlsCert string // --nats-tls-cert: client certificate file
	tlsKey  string // --nats-tls-key: client key file
}

// options returns the nats.Options of the files given; none when none is.
func (s natsSecurity) options() []nats.Option {
	var opts []nats.Option
	if s.creds != "" {
		opts = append(opts, nats.UserCredentials(s.creds))
	}
	if s.tlsCA != "" {
		opts = append(opts, nats.RootCAs(s.tlsCA))
	}
	if s.tlsCert != "" || s.tlsKey != "" {
		opts = append(opts, nats.ClientCert(s.tlsCert, s.tlsKey))
	}
	return opts
}

// validate reports a client certificate given without its key, or the
// other way round.
func (s natsSecurity) validate() error {
	switch {
	case s.tlsCert != "" && s.tlsKey == "":
		return errors.New("--nats-tls-cert needs --nats-tls-key: give the file of the client certificate's private key too")
	case s.tlsKey != "" && s.tlsCert == "":
		return errors.New("--nats-tls-key needs --nats-tls-cert: give the client certificate file too")
	}
	return nil
}
