package main

import (
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
)

// natsSecurity says how to authenticate to a NATS server and verify it:
// the --nats-creds, --nats-nkey and --nats-tls-* flags that serve and the
// commands talking to NATS share.
type natsSecurity struct {
	creds   string // --nats-creds: credentials file, JWT and NKey seed
	nkey    string // --nats-nkey: NKey seed file, such as DATA_DIR/nats/sluice.nk
	tlsCA   string // --nats-tls-ca: CA certificate file
	tlsCert string // --nats-tls-cert: client certificate file
	tlsKey  string // --nats-tls-key: client key file
}

// options returns the nats.Options of the files given; none when none is.
// It reads the seed of --nats-nkey, to check it: nats.go reads it again
// to sign each connection's challenge, and never keeps it.
func (s natsSecurity) options() ([]nats.Option, error) {
	var opts []nats.Option
	if s.creds != "" {
		opts = append(opts, nats.UserCredentials(s.creds))
	}
	if s.nkey != "" {
		opt, err := nats.NkeyOptionFromSeed(s.nkey)
		if err != nil {
			return nil, fmt.Errorf("--nats-nkey %s: %w", s.nkey, err)
		}
		opts = append(opts, opt)
	}
	if s.tlsCA != "" {
		opts = append(opts, nats.RootCAs(s.tlsCA))
	}
	if s.tlsCert != "" || s.tlsKey != "" {
		opts = append(opts, nats.ClientCert(s.tlsCert, s.tlsKey))
	}
	return opts, nil
}

// validate reports a client certificate given without its key, or the
// other way round, and two ways to authenticate at once.
func (s natsSecurity) validate() error {
	switch {
	case s.creds != "" && s.nkey != "":
		return errors.New("--nats-creds and --nats-nkey are two ways to authenticate to NATS: give one of them (--nats-nkey for the embedded server's identities and servers configured with nkey users, --nats-creds for decentralised JWT auth)")
	case s.tlsCert != "" && s.tlsKey == "":
		return errors.New("--nats-tls-cert needs --nats-tls-key: give the file of the client certificate's private key too")
	case s.tlsKey != "" && s.tlsCert == "":
		return errors.New("--nats-tls-key needs --nats-tls-cert: give the client certificate file too")
	}
	return nil
}
