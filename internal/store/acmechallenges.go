package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

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

// MaxACMEChallengeAge is how long a TXT value stays under its token when
// nothing removes it: a job that dies mid-order (killed, or its lease
// lost) leaves its values behind, and they would fill the token up to
// MaxACMEChallengeValues for ever. A value is needed only from the job's
// Present to the authority's validation, which the job asks for at once
// and waits for within its timeout (acme.Config.JobTimeout, 5 minutes by
// default, which acme.Config.Validate keeps below this bound; lego's
// order timeout is the same). The authority's pending authorization may
// live longer (7 days at Let's Encrypt), but it is validated only when
// the job asks, and a retry presents its value again, which renews it.
// An hour also leaves a hand-run certbot --manual time to finish.
const MaxACMEChallengeAge = time.Hour

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
	// AddedAt is when each value was last added, by value, by the clock
	// of the store that added it (Config.Clock): the lease holder's for
	// the certificate jobs' values, the operator's machine's for
	// `sluice acme-challenges add`, which writes to the store directly.
	// A value without one, stored before the store kept them, is stamped
	// when an add or a sweep first sees it, so that it is dropped
	// MaxACMEChallengeAge after that. The sweep (DropStaleACMEChallenges)
	// stamps a time in its own future with its now, so that a writer's
	// clock ahead keeps a value no longer than MaxACMEChallengeAge after
	// the first sweep that sees it; a writer's clock behind by d shortens
	// its value's life by d, to nothing from an hour on, and an add by a
	// clock an hour ahead or more drops the token's other values.
	AddedAt map[string]time.Time `json:"added_at,omitempty"`
}

// dropStale stamps the values without a time with now, and, with
// future, those whose time is after now; it drops the values added
// MaxACMEChallengeAge or longer before now, and the times of values not
// held; it returns how many values it dropped, and whether it changed c.
func (c *ACMEChallenge) dropStale(now time.Time, future bool) (int, bool) {
	changed := false
	if c.AddedAt == nil {
		c.AddedAt = make(map[string]time.Time, len(c.Values))
	}
	for _, v := range c.Values {
		if at, ok := c.AddedAt[v]; !ok || future && at.After(now) {
			c.AddedAt[v], changed = now, true
		}
	}
	held := len(c.Values)
	c.Values = slices.DeleteFunc(c.Values, func(v string) bool { return now.Sub(c.AddedAt[v]) >= MaxACMEChallengeAge })
	dropped := held - len(c.Values)
	maps.DeleteFunc(c.AddedAt, func(v string, _ time.Time) bool {
		if slices.Contains(c.Values, v) {
			return false
		}
		changed = true
		return true
	})
	return dropped, changed || dropped > 0
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
// renews its time. Two adds, or an add and a remove, at once from any
// processes both take effect. The token's values added
// MaxACMEChallengeAge ago or more are dropped first, so that the values
// of a job that died mid-order do not fill the token.
//
// It returns a *ValidationError (matching ErrInvalid) for a token or a
// value checkACMEChallenge refuses, or when the token holds
// MaxACMEChallengeValues other values already (remove the ones whose
// challenges have ended).
func (cs Certificates) AddACMEChallenge(ctx context.Context, token, value string) error {
	if err := checkACMEChallenge(token, value); err != nil {
		return err
	}
	key := acmeChallengeKey(token)
	return retryConflicts(ctx, func() error {
		c, rev, err := getRecord[ACMEChallenge](ctx, cs.store, key)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("reading the ACME challenges of %s: %w", token, err)
		}
		now := cs.store.now()
		// A time in this writer's future is left as it is: this clock
		// may be the one behind (see ACMEChallenge.AddedAt).
		_, changed := c.dropStale(now, false)
		if !slices.Contains(c.Values, value) {
			if len(c.Values) >= MaxACMEChallengeValues {
				full := invalid("value", "the token %s holds %d TXT values already, the most it may: remove those of challenges that have ended", token, len(c.Values))
				if changed { // keep the stamps of values stored without a time
					if err := putRecordAt(ctx, cs.store, key, c, rev); err != nil {
						return err
					}
				}
				return full
			}
			c.Values = append(c.Values, value)
		}
		c.Token = token
		c.AddedAt[value] = now
		return putRecordAt(ctx, cs.store, key, c, rev)
	})
}

// RemoveACMEChallenge removes value from the TXT values of the token, and
// the token's key with its last value; removing a value the token does not
// hold changes nothing. It returns a *ValidationError (matching
// ErrInvalid) for a token or a value checkACMEChallenge refuses.
func (cs Certificates) RemoveACMEChallenge(ctx context.Context, token, value string) error {
	if err := checkACMEChallenge(token, value); err != nil {
		return err
	}
	key := acmeChallengeKey(token)
	return retryConflicts(ctx, func() error {
		c, rev, err := getRecord[ACMEChallenge](ctx, cs.store, key)
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
		delete(c.AddedAt, value)
		return cs.store.putACMEChallenge(ctx, key, c, rev)
	})
}

// putACMEChallenge writes c at key if the key is still at revision rev,
// or deletes the key if c holds no value.
func (s *Store) putACMEChallenge(ctx context.Context, key string, c ACMEChallenge, rev uint64) error {
	if len(c.Values) > 0 {
		return putRecordAt(ctx, s, key, c, rev)
	}
	err := s.kv.Delete(ctx, key, jetstream.LastRevision(rev))
	if isRevisionMismatch(err) { // Delete does not say so itself
		return fmt.Errorf("%w: %w", err, jetstream.ErrKeyRevisionMismatch)
	}
	return err
}

// DropStaleACMEChallenges drops, from every token, the TXT values added
// MaxACMEChallengeAge ago or more, and the token's key with its last
// value, so that the DNS stops answering the values of a job that died
// mid-order even when no add comes to the token again; it stamps the
// values stored without a time, or with one after its now (a writer's
// clock ahead: see ACMEChallenge.AddedAt). The lease holder of the
// certificate jobs runs it, whose clock is the one the values are aged
// by. It returns how many values it dropped;
// a token it cannot read or write is left for the next sweep, its error
// joined to the one returned.
func (cs Certificates) DropStaleACMEChallenges(ctx context.Context) (int, error) {
	var keys []string
	if err := cs.store.eachEntry(ctx, acmeChallengesKind+".*", func(e jetstream.KeyValueEntry) { keys = append(keys, e.Key()) }); err != nil {
		return 0, err
	}
	slices.Sort(keys)
	keys = slices.Compact(keys) // a key written during the read comes twice
	var dropped int
	var errs []error
	for _, key := range keys {
		err := retryConflicts(ctx, func() error {
			c, rev, err := getRecord[ACMEChallenge](ctx, cs.store, key)
			if errors.Is(err, ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			n, changed := c.dropStale(cs.store.now(), true)
			if !changed {
				return nil
			}
			if err := cs.store.putACMEChallenge(ctx, key, c, rev); err != nil {
				return err
			}
			dropped += n
			return nil
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("dropping the stale values of %s: %w", key, err))
		}
	}
	return dropped, errors.Join(errs...)
}
