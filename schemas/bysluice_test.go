package schemas

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestKindsOnlySluiceEmits checks which kinds the catalogue marks as
// sluice's own, that ingest (DecodeBatch, Encode, CheckPublishable)
// refuses each, saying why, and that EncodeBySluice makes each and only
// them.
func TestKindsOnlySluiceEmits(t *testing.T) {
	c := Default()
	var own []string
	for _, k := range c.Kinds() {
		if k.EmittedBySluice {
			own = append(own, k.Name)
		}
	}
	want := []string{"agent_session_start.v0", "agent_session_stop.v0"} // the edge's
	for _, family := range []string{"api_key", "domain", "event_destination", "event_subscription", "tls_certificate", "tunnel_credential", "tunnel_group_backend"} {
		for _, change := range []string{"created", "deleted", "updated"} {
			want = append(want, family+"_"+change+".v0")
		}
	}
	if !slices.Equal(own, want) {
		t.Fatalf("kinds emitted by sluice: %v, want %v", own, want)
	}

	s := NewSampler(3)
	for _, kind := range own {
		t.Run(kind, func(t *testing.T) {
			ev, err := s.Event(kind)
			if err != nil {
				t.Fatal(err)
			}
			ev.AccountID = testAccount
			refused := func(what string, err error) {
				t.Helper()
				var fe *FieldError
				want := kind + " is emitted by sluice itself about its own resources and cannot be published"
				if strings.HasPrefix(kind, "agent_session_") {
					want = kind + " is emitted by sluice itself, by its edge when an agent session starts or stops, and cannot be published"
				}
				if !errors.As(err, &fe) || fe.Path != "event_type" || !errors.Is(err, ErrEmittedBySluice) || !strings.Contains(err.Error(), want) {
					t.Errorf("%s: error %v, want a *FieldError at event_type wrapping ErrEmittedBySluice that says why", what, err)
				}
			}

			body := `[{"event_type":"` + kind + `","principal":` + string(ev.Principal) + `,"object":` + string(ev.Object) + `}]`
			b, err := c.DecodeBatch([]byte(body), decodeOpts())
			if err != nil || len(b.Events) != 0 || len(b.Errors) != 1 {
				t.Fatalf("DecodeBatch: %v, %d events, errors %v; want the event refused", err, len(b.Events), b.Errors)
			}
			refused("DecodeBatch", b.Errors[0].Err)
			_, err = c.Encode(ev)
			refused("Encode", err)

			enc, err := c.EncodeBySluice(ev)
			if err != nil {
				t.Fatalf("EncodeBySluice: %v", err)
			}
			if err := c.CheckPublishable(&enc); err != nil {
				t.Errorf("CheckPublishable of sluice's own event: %v", err)
			}
			forged := Encoded{ID: enc.ID, Type: enc.Type, AccountID: enc.AccountID, Data: enc.Data}
			refused("CheckPublishable of an event built by hand", c.CheckPublishable(&forged))
		})
	}

	other, err := s.Event("certificate_authority_deleted.v0")
	if err != nil {
		t.Fatal(err)
	}
	other.AccountID = testAccount
	if _, err := c.EncodeBySluice(other); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("EncodeBySluice of a kind sluice does not emit: %v, want ErrUnknownKind", err)
	}
	enc, err := c.Encode(other)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckPublishable(&enc); err != nil {
		t.Errorf("CheckPublishable of %s: %v", other.Type, err)
	}
}
