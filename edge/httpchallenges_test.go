package edge

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

type fakeAnswers map[string]string // "host token" → key authorization

func (f fakeAnswers) HTTPChallengeAnswer(_ context.Context, domain, token string) (string, error) {
	if a, ok := f[domain+" "+token]; ok {
		return a, nil
	}
	return "", errors.New("none pending")
}

// TestServeHTTPChallenges: a pending challenge of the request's host is
// answered with its key authorization, whatever the port; anything else,
// another host's token included, goes to the edge's handler.
func TestServeHTTPChallenges(t *testing.T) {
	h := ServeHTTPChallenges(fakeAnswers{"shop.example.com tok_1": "tok_1.thumb"}, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	}))
	for _, c := range []struct {
		method, host, path string
		status             int
		body               string
	}{
		{http.MethodGet, "shop.example.com", "/.well-known/acme-challenge/tok_1", http.StatusOK, "tok_1.thumb"},
		{http.MethodGet, "shop.example.com:80", "/.well-known/acme-challenge/tok_1", http.StatusOK, "tok_1.thumb"},
		{http.MethodGet, "other.example.com", "/.well-known/acme-challenge/tok_1", http.StatusTeapot, ""},
		{http.MethodGet, "shop.example.com", "/.well-known/acme-challenge/tok_2", http.StatusTeapot, ""},
		{http.MethodPost, "shop.example.com", "/.well-known/acme-challenge/tok_1", http.StatusTeapot, ""},
		{http.MethodGet, "shop.example.com", "/orders", http.StatusTeapot, ""},
	} {
		req := httptest.NewRequest(c.method, "http://"+c.host+c.path, nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		body, _ := io.ReadAll(rec.Result().Body)
		if rec.Code != c.status || string(body) != c.body {
			t.Errorf("%s %s%s: %d %q, want %d %q", c.method, c.host, c.path, rec.Code, body, c.status, c.body)
		}
	}
}
