package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHealthcheck(t *testing.T) {
	clearSluiceEnv(t)
	ready := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ready\n"))
	}))
	t.Cleanup(ready.Close)
	notReady := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "not connected to NATS", http.StatusServiceUnavailable)
	}))
	t.Cleanup(notReady.Close)
	readyTLS := httptest.NewTLSServer(ready.Config.Handler)
	t.Cleanup(readyTLS.Close)

	tests := []struct {
		name    string
		args    []string
		wantOut string
		wantErr string
	}{
		{name: "ready", args: []string{"--url", ready.URL + "/readyz"}, wantOut: "ready\n"},
		{name: "not ready", args: []string{"--url", notReady.URL + "/readyz"}, wantErr: "answered 503 Service Unavailable: not connected to NATS"},
		{name: "nobody listening", args: []string{"--url", "http://127.0.0.1:1/readyz"}, wantErr: "checking http://127.0.0.1:1/readyz"},
		{name: "https unverified", args: []string{"--url", readyTLS.URL + "/readyz"}, wantErr: "certificate"},
		{name: "https, verification skipped", args: []string{"--url", readyTLS.URL + "/readyz", "--insecure-skip-verify"}, wantOut: "ready\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := runSluice(t, "", append([]string{"healthcheck"}, tt.args...)...)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			case out != tt.wantOut:
				t.Fatalf("printed %q, want %q", out, tt.wantOut)
			}
		})
	}
}

// TestHealthcheckAPIURL checks that healthcheck finds the process as the
// other commands do: --api-url or SLUICE_API_URL, then its /readyz.
func TestHealthcheckAPIURL(t *testing.T) {
	paths := make(chan string, 10)
	ready := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths <- r.URL.Path
		_, _ = w.Write([]byte("ready\n"))
	}))
	t.Cleanup(ready.Close)

	tests := []struct {
		name     string
		env      string // SLUICE_API_URL
		args     []string
		wantPath string
	}{
		{name: "SLUICE_API_URL", env: ready.URL, wantPath: readyzPath},
		{name: "SLUICE_API_URL with a slash", env: ready.URL + "/", wantPath: readyzPath},
		{name: "--api-url", args: []string{"--api-url", ready.URL}, wantPath: readyzPath},
		{name: "--url wins", env: "http://127.0.0.1:1", args: []string{"--url", ready.URL + healthzPath}, wantPath: healthzPath},
		{name: "--url a base URL", env: "http://127.0.0.1:1", args: []string{"--url", ready.URL}, wantPath: readyzPath},
		{name: "--url a base URL with a slash", args: []string{"--url", ready.URL + "/"}, wantPath: readyzPath},
		{name: "--url a base URL with a prefix", args: []string{"--url", ready.URL + "/sluice"}, wantPath: "/sluice" + readyzPath},
		{name: "--url with /readyz", args: []string{"--url", ready.URL + readyzPath}, wantPath: readyzPath},
		{name: "--url with /livez", args: []string{"--url", ready.URL + "/livez"}, wantPath: "/livez"},
		{name: "--url of the emulator's probe", args: []string{"--url", ready.URL + "/_emulator/healthz"}, wantPath: "/_emulator/healthz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearSluiceEnv(t)
			if tt.env != "" {
				t.Setenv("SLUICE_API_URL", tt.env)
			}
			out, _, err := runSluice(t, "", append([]string{"healthcheck", "--timeout", "5s"}, tt.args...)...)
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if out != "ready\n" {
				t.Fatalf("printed %q, want %q", out, "ready\n")
			}
			if got := <-paths; got != tt.wantPath {
				t.Fatalf("checked %s, want %s", got, tt.wantPath)
			}
		})
	}

	t.Run("not a URL", func(t *testing.T) {
		clearSluiceEnv(t)
		_, _, err := runSluice(t, "", "healthcheck", "--url", "127.0.0.1:8080")
		if err == nil || !strings.Contains(err.Error(), `--url "127.0.0.1:8080": want an http or https URL`) {
			t.Fatalf("error %v, want one saying --url wants an http or https URL", err)
		}
	})

	t.Run("nobody there", func(t *testing.T) {
		clearSluiceEnv(t)
		t.Setenv("SLUICE_API_URL", "http://127.0.0.1:1")
		_, _, err := runSluice(t, "", "healthcheck")
		if err == nil || !strings.Contains(err.Error(), "checking http://127.0.0.1:1/readyz") || !strings.Contains(err.Error(), apiURLHint) {
			t.Fatalf("error %v, want one naming http://127.0.0.1:1/readyz and saying %q", err, apiURLHint)
		}
	})
}
