package main

import (
	"strings"
	"testing"
	"time"
)

// TestServeFlagsValidateReportsAllInOrder checks the whole message of
// flags with many mistakes: every one reported, one a line, in the order
// of the flags' checks, so that reordering or merging the checks cannot
// change what serve prints.
func TestServeFlagsValidateReportsAllInOrder(t *testing.T) {
	valid := serveFlags{retention: 72 * time.Hour, replicas: 1, shutdownTimeout: 15 * time.Second, ackWait: 30 * time.Second, linger: 200 * time.Millisecond, roles: defaultRoles(), devAWSListen: "127.0.0.1:4566", httpAddr: "127.0.0.1:8080"}
	tests := []struct {
		name string
		edit func(*serveFlags)
		want string
	}{
		{
			name: "embedded server",
			edit: func(f *serveFlags) {
				f.natsCreds, f.natsTLSCA, f.natsTLSCert = "c.creds", "ca.pem", "c.pem"
				f.dev, f.devAWSListen, f.roles = true, "0.0.0.0:4566", []string{"api", "ingest"}
				f.tlsCert = "cert.pem"
				f.metricsAddr = "9464"
				f.publicURL = "sluice.example.com"
				f.shutdownTimeout = -time.Second
				f.retention = -time.Hour
				f.memoryLimit = "half"
				f.ackWait = time.Millisecond
				f.failingAfter = -time.Minute
				f.linger = 0
				f.replicas = 0
				f.limits.maxInFlight = -1
			},
			want: strings.Join([]string{
				"--nats-creds is for an external NATS server: give its address with --nats-url, or drop --nats-creds to use the embedded server",
				"--nats-tls-ca is for an external NATS server: give its address with --nats-url, or drop --nats-tls-ca to use the embedded server",
				"--nats-tls-cert is for an external NATS server: give its address with --nats-url, or drop --nats-tls-cert to use the embedded server",
				"--nats-tls-cert needs --nats-tls-key: give the file of the client certificate's private key too",
				"--dev-aws-listen: \"0.0.0.0:4566\": the emulator has no authentication, so it listens on loopback only (127.0.0.1, ::1 or localhost)",
				"--dev delivers to its AWS emulator, and only the worker role delivers: add worker to --roles api,ingest, or drop --dev",
				"--tls-cert needs --tls-key: give the file of the certificate's private key too",
				"--metrics-http \"9464\" is not HOST:PORT: give the address of the metrics listener, such as 127.0.0.1:9464, or an empty value for none",
				"--public-url \"sluice.example.com\" is not a full http or https URL: give the scheme and host clients reach the API at, such as https://sluice.example.com",
				"--shutdown-timeout -1s is negative: give how long requests in flight may take to finish, such as 15s",
				"--retention -1h0m0s is negative: give how long the stream keeps events, such as 72h",
				"--memory-limit \"half\": give a size such as 512MiB, 2GiB or 1073741824",
				"--ack-wait 1ms: give at least 1s, such as 30s; sluice keeps events it is still sending in progress well within it",
				"--failing-after -1m0s is negative: give how long a destination may fail before it is failing, such as 5m",
				"--linger 0s: give a duration up to a minute, such as 200ms",
				"--replicas 0: JetStream keeps 1 to 5 replicas; use 1 on a single server, 3 on a cluster",
				"--max-in-flight -1 is negative: give a positive number (0 takes the default)",
			}, "\n"),
		},
		{
			name: "external server",
			edit: func(f *serveFlags) {
				f.natsURL, f.natsTLSKey = "nats://n:4222", "k.pem"
				f.roles = []string{"api", "delivery"}
				f.dev = true
				f.tlsKey = "key.pem"
				f.metricsAddr = f.httpAddr
				f.dataKeyFile, f.natsListen = "data.key", "127.0.0.1:4222"
				f.retention = time.Minute
				f.linger = time.Hour
				f.replicas = 6
				f.limits.maxBytesInFlight = "lots"
			},
			want: strings.Join([]string{
				"--nats-tls-key needs --nats-tls-cert: give the client certificate file too",
				"--roles: unknown role \"delivery\": the roles are api, ingest, worker, edge, comma-separated",
				"--tls-key needs --tls-cert: give the certificate file too",
				"--metrics-http 127.0.0.1:8080 is the address of --http: give /metrics its own port, such as 127.0.0.1:9464, as it must not be reachable where the API is",
				"--data-key-file encrypts the store of the embedded NATS server, which --nats-url replaces: give the external server its own key (jetstream { cipher, key } in its configuration), and drop --data-key-file",
				"--nats-listen exposes the embedded NATS server, which --nats-url replaces: drop one of them",
				"--retention 1m0s is shorter than the stream's duplicate window of 2m0s: give at least that, such as 72h",
				"--linger 1h0m0s: give a duration up to a minute, such as 200ms",
				"--replicas 6: JetStream keeps 1 to 5 replicas; use 1 on a single server, 3 on a cluster",
				"--max-bytes-in-flight \"lots\": give a size such as 512MiB, 2GiB or 1073741824",
			}, "\n"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := valid
			tt.edit(&f)
			err := f.validate()
			if err == nil {
				t.Fatal("validate accepted the flags")
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("validate:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}
