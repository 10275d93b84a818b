package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/sluicehq/sluice/internal/bytesize"
	"github.com/sluicehq/sluice/pipeline"
)

// validate reports the flags that contradict each other or are out of
// range, each with what to do, before anything starts. The checks run in
// this order, and their errors are joined in it.
func (f serveFlags) validate() error {
	return errors.Join(
		f.checkExternalNATS(),
		f.checkRoles(),
		f.checkDev(),
		f.checkTLS(),
		f.checkMetrics(),
		f.checkEmbeddedNATS(),
		f.checkPublicURL(),
		f.checkShutdown(),
		f.checkRetention(),
		f.checkMemoryLimit(),
		f.checkDelivery(),
		f.checkReplicas(),
		errors.Join(f.limits.validate()...),
		f.domains.validate(),
		f.ingress.validate(),
		f.checkEdge(),
		f.dns.validate(f.dev),
		f.acme.validate(),
	)
}

// checkEdge checks the edge's flags when the process runs the edge role.
func (f serveFlags) checkEdge() error {
	if roles, err := parseRoles(f.roles); err != nil || !roles.edge {
		return nil
	}
	return f.edge.validate(f.dev)
}

// checkExternalNATS checks that the flags of an external NATS server come
// with --nats-url, and its client certificate with its key.
func (f serveFlags) checkExternalNATS() error {
	var errs []error
	if f.natsURL == "" {
		for _, fl := range []struct{ name, value string }{
			{"--nats-creds", f.natsCreds},
			{"--nats-nkey", f.natsNkey},
			{"--nats-tls-ca", f.natsTLSCA},
			{"--nats-tls-cert", f.natsTLSCert},
			{"--nats-tls-key", f.natsTLSKey},
		} {
			if fl.value != "" {
				errs = append(errs, fmt.Errorf("%s is for an external NATS server: give its address with --nats-url, or drop %s to use the embedded server", fl.name, fl.name))
			}
		}
	}
	return errors.Join(append(errs, f.natsSecurity().validate())...)
}

// natsSecurity is how serve authenticates to --nats-url and verifies it.
func (f serveFlags) natsSecurity() natsSecurity {
	return natsSecurity{creds: f.natsCreds, nkey: f.natsNkey, tlsCA: f.natsTLSCA, tlsCert: f.natsTLSCert, tlsKey: f.natsTLSKey}
}

// checkRoles checks that --roles names known roles, at least one.
func (f serveFlags) checkRoles() error {
	_, err := parseRoles(f.roles)
	return err
}

// checkDev checks --dev-aws-max-stored-bytes, and with --dev that the
// emulator listens on loopback and that the process runs the worker role,
// which delivers to it.
func (f serveFlags) checkDev() error {
	var errs []error
	if _, err := f.devAWSMaxStoredBytes(); err != nil {
		errs = append(errs, err)
	}
	if !f.dev {
		return errors.Join(errs...)
	}
	if err := checkLoopback(f.devAWSListen); err != nil {
		errs = append(errs, fmt.Errorf("--dev-aws-listen: %w", err))
	}
	if roles, err := parseRoles(f.roles); err == nil && !roles.worker {
		errs = append(errs, fmt.Errorf("--dev delivers to its AWS emulator, and only the worker role delivers: add worker to --roles %s, or drop --dev", roles))
	}
	return errors.Join(errs...)
}

// checkTLS checks that --tls-cert and --tls-key come together.
func (f serveFlags) checkTLS() error {
	switch {
	case f.tlsCert != "" && f.tlsKey == "":
		return errors.New("--tls-cert needs --tls-key: give the file of the certificate's private key too")
	case f.tlsKey != "" && f.tlsCert == "":
		return errors.New("--tls-key needs --tls-cert: give the certificate file too")
	}
	return nil
}

// checkMetrics checks that --metrics-http, unless empty, is HOST:PORT
// apart from --http.
func (f serveFlags) checkMetrics() error {
	if f.metricsAddr == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(f.metricsAddr)
	switch {
	case err != nil:
		return fmt.Errorf("--metrics-http %q is not HOST:PORT: give the address of the metrics listener, such as 127.0.0.1:9464, or an empty value for none", f.metricsAddr)
	case f.metricsAddr == f.httpAddr && port != "0":
		return fmt.Errorf("--metrics-http %s is the address of --http: give /metrics its own port, such as 127.0.0.1:9464, as it must not be reachable where the API is", f.metricsAddr)
	}
	return nil
}

// checkEmbeddedNATS checks that the flags of the embedded NATS server do
// not come with --nats-url, which replaces it.
func (f serveFlags) checkEmbeddedNATS() error {
	if f.natsURL == "" {
		return nil
	}
	var errs []error
	if f.dataKeyFile != "" {
		errs = append(errs, errors.New("--data-key-file encrypts the store of the embedded NATS server, which --nats-url replaces: give the external server its own key (jetstream { cipher, key } in its configuration), and drop --data-key-file"))
	}
	if f.natsListen != "" {
		errs = append(errs, errors.New("--nats-listen exposes the embedded NATS server, which --nats-url replaces: drop one of them"))
	}
	return errors.Join(errs...)
}

// checkPublicURL checks that --public-url, unless empty, is an http or
// https URL with a host.
func (f serveFlags) checkPublicURL() error {
	if f.publicURL == "" {
		return nil
	}
	if u, err := url.Parse(f.publicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--public-url %q is not a full http or https URL: give the scheme and host clients reach the API at, such as https://sluice.example.com", f.publicURL)
	}
	return nil
}

// checkShutdown checks that --shutdown-timeout is not negative.
func (f serveFlags) checkShutdown() error {
	if f.shutdownTimeout < 0 {
		return fmt.Errorf("--shutdown-timeout %s is negative: give how long requests in flight may take to finish, such as 15s", f.shutdownTimeout)
	}
	return nil
}

// checkRetention checks that --retention covers the stream's duplicate
// window.
func (f serveFlags) checkRetention() error {
	switch {
	case f.retention < 0:
		return fmt.Errorf("--retention %s is negative: give how long the stream keeps events, such as 72h", f.retention)
	case f.retention < pipeline.DuplicateWindow:
		return fmt.Errorf("--retention %s is shorter than the stream's duplicate window of %s: give at least that, such as 72h", f.retention, pipeline.DuplicateWindow)
	}
	return nil
}

// checkMemoryLimit checks that --memory-limit, unless empty, is a size.
func (f serveFlags) checkMemoryLimit() error {
	if f.memoryLimit == "" {
		return nil
	}
	if _, err := bytesize.Parse(f.memoryLimit); err != nil {
		return fmt.Errorf("--memory-limit %q: %w", f.memoryLimit, err)
	}
	return nil
}

// checkDelivery checks the durations of delivery: --ack-wait,
// --failing-after and --linger.
func (f serveFlags) checkDelivery() error {
	var errs []error
	if f.ackWait < time.Second {
		errs = append(errs, fmt.Errorf("--ack-wait %s: give at least 1s, such as 30s; sluice keeps events it is still sending in progress well within it", f.ackWait))
	}
	if f.failingAfter < 0 {
		errs = append(errs, fmt.Errorf("--failing-after %s is negative: give how long a destination may fail before it is failing, such as 5m", f.failingAfter))
	}
	if f.linger <= 0 || f.linger > time.Minute {
		errs = append(errs, fmt.Errorf("--linger %s: give a duration up to a minute, such as 200ms", f.linger))
	}
	return errors.Join(errs...)
}

// checkReplicas checks that --replicas is a number of replicas JetStream
// keeps.
func (f serveFlags) checkReplicas() error {
	if f.replicas < 1 || f.replicas > pipeline.MaxReplicas {
		return fmt.Errorf("--replicas %d: JetStream keeps 1 to %d replicas; use 1 on a single server, 3 on a cluster", f.replicas, pipeline.MaxReplicas)
	}
	return nil
}
