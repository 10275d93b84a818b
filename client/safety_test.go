package client_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/client"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/check"
)

const secretKey = "sk_0123456789secret"

// TestDoSendsTheKeyToTheAPIOnly checks that a URL of another host than the
// API's is refused before any request, so that a URL from an answer (or a
// caller) cannot take the API key elsewhere; a URL of the API's own host
// works.
func TestDoSendsTheKeyToTheAPIOnly(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
	}))
	defer other.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+secretKey {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	defer api.Close()
	c := client.New(api.URL, secretKey)

	err := c.Do(t.Context(), http.MethodGet, other.URL+"/api_keys", nil, nil)
	check.ErrorContains(t, err, "refusing to send the API key to "+other.URL)
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("%d requests reached the other host", n)
	}
	check.ErrorContains(t, c.Do(t.Context(), http.MethodGet, api.URL+"/api_keys?limit=1", nil, nil), "")
	check.ErrorContains(t, c.Do(t.Context(), http.MethodGet, "/api_keys", nil, nil), "")
}

// TestPrintingHidesSecrets checks that printing a client or credentials,
// in every verb of fmt, shows neither the API key nor the secret access
// key.
func TestPrintingHidesSecrets(t *testing.T) {
	c := client.New("http://127.0.0.1:1", secretKey)
	creds := apiwire.Creds{AccessKeyID: "AKIA0", SecretAccessKey: "awsSecret0"}
	auth := apiwire.Auth{Creds: &creds}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		for _, v := range []any{c, *c, creds, &creds, auth} {
			if out := fmt.Sprintf(verb, v); strings.Contains(out, secretKey) || strings.Contains(out, "awsSecret0") {
				t.Errorf("%s of %T shows a secret: %s", verb, v, out)
			}
		}
	}
}

// TestWithTimeoutZero checks that WithTimeout(0) means no bound but the
// context's, as http.Client's Timeout does, rather than a request that
// times out at once.
func TestWithTimeoutZero(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{}`))
	}))
	defer api.Close()
	c := client.New(api.URL, secretKey, client.WithTimeout(0))
	check.ErrorContains(t, c.Do(t.Context(), http.MethodGet, "/api_keys", nil, nil), "")
}

// TestErrorSentinels checks that the API's 404, 409 and 401 match
// ErrNotFound, ErrConflict and ErrUnauthorized, and nothing else.
func TestErrorSentinels(t *testing.T) {
	stack := apitest.Start(t)
	c := client.New(stack.URL, stack.Token)
	bots := c.BotUsers()
	name := "deployer"
	_, err := bots.Create(t.Context(), apiwire.BotUserInput{Name: &name})
	check.ErrorContains(t, err, "")

	_, err = bots.Get(t.Context(), "bot_2mE3xxxxxxxxxxxxxxxxxxxxxxx")
	_, clash := bots.Create(t.Context(), apiwire.BotUserInput{Name: &name})
	_, unknownKey := client.New(stack.URL, "sk_unknown").BotUsers().List(t.Context(), client.ListOptions{})
	for _, tc := range []struct {
		err  error
		want error
	}{{err, client.ErrNotFound}, {clash, client.ErrConflict}, {unknownKey, client.ErrUnauthorized}} {
		for _, sentinel := range []error{client.ErrNotFound, client.ErrConflict, client.ErrUnauthorized} {
			if got := errors.Is(tc.err, sentinel); got != (sentinel == tc.want) {
				t.Errorf("errors.Is(%v, %v) = %v", tc.err, sentinel, got)
			}
		}
	}
}
