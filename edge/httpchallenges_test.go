package edge

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sluicehq/sluice/internal/store"
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

// TestHTTPChallengesTable: the table answers a challenge once applied,
// by its domain in any case, the new answer when the same key changes,
// and none once it is gone.
func TestHTTPChallengesTable(t *testing.T) {
	table := NewHTTPChallenges()
	ctx := context.Background()
	table.Apply("k1", &store.HTTPChallenge{Domain: "Shop.Example.com", Token: "tok_1", KeyAuthorization: "tok_1.a"})
	if got, err := table.HTTPChallengeAnswer(ctx, "shop.example.COM", "tok_1"); err != nil || got != "tok_1.a" {
		t.Fatalf("applied: %q, %v", got, err)
	}
	table.Apply("k1", &store.HTTPChallenge{Domain: "shop.example.com", Token: "tok_2", KeyAuthorization: "tok_2.a"})
	if _, err := table.HTTPChallengeAnswer(ctx, "shop.example.com", "tok_1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the key's old challenge: %v, want ErrNotFound", err)
	}
	if got, _ := table.HTTPChallengeAnswer(ctx, "shop.example.com", "tok_2"); got != "tok_2.a" {
		t.Fatalf("the key's new challenge: %q", got)
	}
	table.Apply("k1", nil)
	if _, err := table.HTTPChallengeAnswer(ctx, "shop.example.com", "tok_2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("gone: %v, want ErrNotFound", err)
	}
}
