package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// httpChallengesKind is the key space of pending ACME HTTP-01 challenges:
// acme_http_challenges.<hash of the domain and token>, an HTTPChallenge.
const httpChallengesKind = "acme_http_challenges"

// maxHTTPChallengeToken bounds a token, base64url of at least 128 bits
// (RFC 8555 8.3; Let's Encrypt's are 43 characters).
const maxHTTPChallengeToken = 128

// HTTPChallenge is a pending ACME HTTP-01 challenge: what the edge
// answers at http://<Domain>/.well-known/acme-challenge/<Token>.
type HTTPChallenge struct {
	Domain           string `json:"domain"`
	Token            string `json:"token"`
	KeyAuthorization string `json:"key_authorization"`
}

func httpChallengeKey(domain, token string) string {
	return httpChallengesKind + "." + foldedHash(strings.ToLower(domain)+" "+token)
}

// checkHTTPChallengeToken returns a *ValidationError for a token that is
// not 1 to 128 base64url characters.
func checkHTTPChallengeToken(token string) error {
	if token == "" || len(token) > maxHTTPChallengeToken {
		return invalid("token", "has %d characters: an HTTP-01 token has 1 to %d", len(token), maxHTTPChallengeToken)
	}
	for _, c := range []byte(token) {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-' && c != '_' {
			return invalid("token", "holds the byte %#x: an HTTP-01 token is base64url", c)
		}
	}
	return nil
}

// PutHTTPChallenge stores a pending HTTP-01 challenge, which every edge
// answers on its HTTP listener as soon as it is stored. It returns a
// *ValidationError for a token checkHTTPChallengeToken refuses.
func (cs Certificates) PutHTTPChallenge(ctx context.Context, c HTTPChallenge) error {
	if err := checkHTTPChallengeToken(c.Token); err != nil {
		return err
	}
	c.Domain = strings.ToLower(c.Domain)
	value, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if _, err := cs.store.kv.Put(ctx, httpChallengeKey(c.Domain, c.Token), value); err != nil {
		return fmt.Errorf("storing the HTTP-01 challenge of %s: %w", c.Domain, err)
	}
	return nil
}

// RemoveHTTPChallenge removes the challenge of the domain and token;
// removing one that is not there changes nothing.
func (cs Certificates) RemoveHTTPChallenge(ctx context.Context, domain, token string) error {
	if checkHTTPChallengeToken(token) != nil {
		return nil
	}
	err := cs.store.kv.Purge(ctx, httpChallengeKey(domain, token))
	if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("removing the HTTP-01 challenge of %s: %w", domain, err)
	}
	return nil
}

// HTTPChallengeAnswer returns the key authorization the edge answers at
// http://<domain>/.well-known/acme-challenge/<token>, or an error
// wrapping ErrNotFound if no such challenge is pending (or the token is
// not one).
func (cs Certificates) HTTPChallengeAnswer(ctx context.Context, domain, token string) (string, error) {
	if checkHTTPChallengeToken(token) != nil {
		return "", ErrNotFound
	}
	c, _, err := getRecord[HTTPChallenge](ctx, cs.store, httpChallengeKey(domain, token))
	if err != nil {
		return "", err
	}
	if c.Domain != strings.ToLower(domain) || c.Token != token {
		return "", ErrNotFound
	}
	return c.KeyAuthorization, nil
}

// FollowHTTPChallenges calls apply with every pending HTTP-01 challenge,
// by its key, then with each change of them (nil: gone, or unreadable),
// until ctx ends, as FollowTLSCertificates does with certificates: the
// edges answer challenges from memory, so that a public request of the
// challenge path costs no store read.
func (cs Certificates) FollowHTTPChallenges(ctx context.Context, log *slog.Logger, apply func(key string, c *HTTPChallenge), ready func()) {
	cs.store.followCurrent(ctx, log, "ACME HTTP-01 challenges (the edges answer those they have meanwhile)",
		[]string{httpChallengesKind + ".>"}, func(key string, entry jetstream.KeyValueEntry) {
			if entry == nil {
				apply(key, nil)
				return
			}
			c := new(HTTPChallenge)
			if err := json.Unmarshal(entry.Value(), c); err != nil {
				log.Warn("not answering an HTTP-01 challenge that cannot be read", "key", key, "error", err)
				c = nil
			}
			apply(key, c)
		}, ready)
}
