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
