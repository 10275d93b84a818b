package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"

	"github.com/nats-io/nats.go/jetstream"
)

// acmeChallengesKind is the key space of the TXT values of pending ACME
// DNS-01 challenges: acme_challenges.<token>, one key a token, holding
// every value pending under it (an ACMEChallenge).
const acmeChallengesKind = "acme_challenges"

// MaxACMEChallengeValues is how many TXT values one token holds at once: a
// wildcard's order and its base name's validate under one name, each with
// its value, and a renewal may overlap an order that has not ended yet.
// It bounds the answer the DNS server gives for the token.
const MaxACMEChallengeValues = 8

// maxACMEChallengeValue is the longest TXT value, one character string
// (RFC 1035 3.3.14); a DNS-01 value is 43 characters (RFC 8555 8.4).
const maxACMEChallengeValue = 255

// ACMEChallenge is the TXT values pending under one token: what
// <token>.acme.<first service domain> answers, the name a custom wildcard
// domain's _acme-challenge is a CNAME of (spec 2.2), or what an agent
// ingress's _acme-challenge.tunnel.<region>.<domain> answers.
type ACMEChallenge struct {
	// Token is DomainToken of the reserved domain, or
	// IngressChallengeToken of the agent ingress and region.
	Token string `json:"token"`
	// Values are the TXT values, in the order they were added, none twice.
	Values []string `json:"values"`
}

// DomainToken returns the token of the reserved domain with the id: the
// hex of the first 10 bytes of its SHA-256, the first label of its
// cname_target (<token>.cname.<service domain>) and of its
// acme_challenge_cname_target (<token>.acme.<service domain>).
func DomainToken(reservedDomainID string) string {
	sum := sha256.Sum256([]byte(reservedDomainID))
	return hex.EncodeToString(sum[:10])
}

// IngressChallengeToken returns the token of the ACME challenges of an
// agent ingress's region domain tunnel.<region>.<domain>: DomainToken of
// the ingress's id and the region, which sluice's DNS answers at
// _acme-challenge.tunnel.<region>.<domain>, in the zone the ingress
// delegates to it. An agent ingress's id and a reserved domain's differ
// in their prefix, so their tokens do not meet.
func IngressChallengeToken(agentIngressID, region string) string {
	return DomainToken(agentIngressID + "/" + region)
}

func acmeChallengeKey(token string) string { return acmeChallengesKind + "." + token }

// checkACMEChallenge returns a *ValidationError for a token that is not
// 20 lower-case hex digits, as DomainToken makes, or a value that is not
// 1 to 255 printable ASCII characters.
func checkACMEChallenge(token, value string) error {
	if len(token) != 20 || !isLowerHex(token) {
		return invalid("token", "is %q: give the token of the reserved domain or region domain, 20 lower-case hex digits (DomainToken or IngressChallengeToken)", token)
	}
	if value == "" || len(value) > maxACMEChallengeValue {
		return invalid("value", "has %d characters: a TXT value has 1 to %d", len(value), maxACMEChallengeValue)
	}
	for _, c := range []byte(value) {
		if c < 0x21 || c > 0x7e {
			return invalid("value", "holds the byte %#x: a challenge's TXT value is printable ASCII without spaces (base64url for DNS-01)", c)
		}
	}
	return nil
}

func isLowerHex(s string) bool {
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// AddACMEChallenge adds value to the TXT values of the token, which every
// process serving DNS answers at <token>.acme.<first service domain> as
// soon as its watch brings it (dnsserver). Adding a value the token holds
// changes nothing. Two adds, or an add and a remove, at once from any
// processes both take effect.
//
// It returns a *ValidationError (matching ErrInvalid) for a token or a
// value checkACMEChallenge refuses, or when the token holds
// MaxACMEChallengeValues other values already (remove the ones whose
// challenges have ended).
func (s *Store) AddACMEChallenge(ctx context.Context, token, value string) error {
	if err := checkACMEChallenge(token, value); err != nil {
		return err
	}
	key := acmeChallengeKey(token)
	return retryConflicts(ctx, func() error {
		c, rev, err := getRecord[ACMEChallenge](ctx, s, key)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("reading the ACME challenges of %s: %w", token, err)
		}
		if slices.Contains(c.Values, value) {
			return nil
		}
		if len(c.Values) >= MaxACMEChallengeValues {
			return invalid("value", "the token %s holds %d TXT values already, the most it may: remove those of challenges that have ended", token, len(c.Values))
		}
		c.Token = token
		c.Values = append(c.Values, value)
		return putRecordAt(ctx, s, key, c, rev)
	})
}

// RemoveACMEChallenge removes value from the TXT values of the token, and
// the token's key with its last value; removing a value the token does not
// hold changes nothing. It returns a *ValidationError (matching
// ErrInvalid) for a token or a value checkACMEChallenge refuses.
func (s *Store) RemoveACMEChallenge(ctx context.Context, token, value string) error {
	if err := checkACMEChallenge(token, value); err != nil {
		return err
	}
	key := acmeChallengeKey(token)
	return retryConflicts(ctx, func() error {
		c, rev, err := getRecord[ACMEChallenge](ctx, s, key)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the ACME challenges of %s: %w", token, err)
		}
		i := slices.Index(c.Values, value)
		if i < 0 {
			return nil
		}
		c.Values = slices.Delete(c.Values, i, i+1)
		if len(c.Values) > 0 {
			return putRecordAt(ctx, s, key, c, rev)
		}
		err = s.kv.Delete(ctx, key, jetstream.LastRevision(rev))
		if isRevisionMismatch(err) { // Delete does not say so itself
			return fmt.Errorf("%w: %w", err, jetstream.ErrKeyRevisionMismatch)
		}
		return err
	})
}
