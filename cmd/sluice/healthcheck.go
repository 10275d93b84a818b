package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
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
		Long: `Send GET --api-url's ` + readyzPath + ` (or --url's) and exit 0 on a 200 answer, 1
otherwise. --url is a base URL, as --api-url, unless its path already ends in
a probe's path (` + healthzPath + `, ` + readyzPath + `, ` + livezPath + `), which is then checked as it is. For the health check of a container whose image holds nothing but
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
	fl.StringVar(&f.url, "url", "", "base URL to check instead of --api-url, such as the metrics listener's; a URL whose path ends in "+healthzPath+", "+readyzPath+" or "+livezPath+" is checked as it is")
	fl.DurationVar(&f.timeout, "timeout", 5*time.Second, "how long to wait for the answer")
	fl.BoolVar(&f.insecure, "insecure-skip-verify", false, "do not verify an https URL's certificate, for a process checking its own listener on loopback")
	return cmd
}

// livezPath is a liveness probe's path in other services' convention: a
// --url ending in it is checked as it is, as before --url took a base URL.
const livezPath = "/livez"

// target returns the URL to check: --url, or else --api-url, each a base
// URL to which the readiness path is added unless it names a probe's path
// already (probeURL).
func (f healthcheckFlags) target() string {
	if f.url != "" {
		return probeURL(f.url)
	}
	return probeURL(f.apiURL)
}

// probeURL returns the URL to check for u: u itself when its path ends in
// a probe's path (/healthz, /readyz, /livez), else u's readiness path, so
// that the base URL of the API, http://127.0.0.1:8080, checks
// http://127.0.0.1:8080/readyz. A query stays where it is.
func probeURL(u string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return u // NewRequest says what is wrong with it
	}
	for _, probe := range []string{healthzPath, readyzPath, livezPath} {
		if strings.HasSuffix(strings.TrimRight(parsed.Path, "/"), probe) {
			return u
		}
	}
	parsed.Path = strings.TrimRight(parsed.Path, "/") + readyzPath
	parsed.RawPath = ""
	return parsed.String()
}

func runHealthcheck(ctx context.Context, f healthcheckFlags, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	flag, given := "--api-url", f.apiURL
	if f.url != "" {
		flag, given = "--url", f.url
	}
	if u, err := url.Parse(given); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s %q: want an http or https URL such as http://127.0.0.1:8080 (the API's base URL; %s is added)", flag, given, readyzPath)
	}
	target := f.target()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return fmt.Errorf("%s %q: %w", flag, given, err)
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
