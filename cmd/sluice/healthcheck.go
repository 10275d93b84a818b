package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

type healthcheckFlags struct {
	apiURL   string // base URL of the process: its readiness path is checked
	url      string // the URL to check, when given: wins over apiURL
	timeout  time.Duration
	insecure bool
}

// newHealthcheckCommand is `sluice healthcheck`: the health check of a
// container whose image has nothing but sluice (no shell, no curl).
func newHealthcheckCommand() *cobra.Command {
	var f healthcheckFlags
	cmd := &cobra.Command{
		Use:   "healthcheck",
		Short: "Exit 0 when a sluice process answers 200 on its readiness path, for container health checks",
		Long: `Send GET --api-url's ` + readyzPath + ` (or --url) and exit 0 on a 200 answer, 1
otherwise. For the health check of a container whose image holds nothing but
sluice, such as
  healthcheck: {test: ["CMD", "sluice", "healthcheck"]}
in docker-compose.yml. Kubernetes probes /healthz and /readyz itself.

--api-url and --url can be set as SLUICE_API_URL and SLUICE_URL.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runHealthcheck(cmd.Context(), f, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.apiURL, "api-url", "http://127.0.0.1:8080", "base URL of the sluice process, as the other commands take it: its "+readyzPath+" is checked")
	fl.StringVar(&f.url, "url", "", "full URL to check instead, such as serve's "+healthzPath+" (alive) or the metrics listener's "+readyzPath+" (default: --api-url and "+readyzPath+")")
	fl.DurationVar(&f.timeout, "timeout", 5*time.Second, "how long to wait for the answer")
	fl.BoolVar(&f.insecure, "insecure-skip-verify", false, "do not verify an https URL's certificate, for a process checking its own listener on loopback")
	return cmd
}

// target returns the URL to check: --url, or else --api-url's readiness
// path.
func (f healthcheckFlags) target() string {
	if f.url != "" {
		return f.url
	}
	return strings.TrimRight(f.apiURL, "/") + readyzPath
}

func runHealthcheck(ctx context.Context, f healthcheckFlags, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	target := f.target()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		if f.url == "" {
			return fmt.Errorf("--api-url %q: %w", f.apiURL, err)
		}
		return fmt.Errorf("--url %q: %w", f.url, err)
	}
	transport := &http.Transport{DisableKeepAlives: true}
	if f.insecure {
		transport.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} // asked for with --insecure-skip-verify
	}
	defer transport.CloseIdleConnections()
	resp, err := (&http.Client{Transport: transport}).Do(req)
	if err != nil {
		return fmt.Errorf("checking %s: %w; %s", target, err, apiURLHint)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return fmt.Errorf("reading the answer of %s: %w", target, err)
	}
	answer := strings.TrimSpace(string(body))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s: %s", target, resp.Status, answer)
	}
	fmt.Fprintln(stdout, answer)
	return nil
}
