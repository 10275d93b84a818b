package schemas

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/segmentio/ksuid"
)

// ID prefixes. An id is a prefix and a 27-character KSUID, so sorting ids
// sorts them by creation time (to the second; exactly for ids of IDs).
const (
	PrefixEvent          = "ev_"
	PrefixAccount        = "ac_"
	PrefixAPIKey         = "ak_"
	PrefixSubscription   = "esb_"
	PrefixDestination    = "ed_"
	PrefixOperation      = "op_"
	PrefixBotUser        = "bot_"
	PrefixAgentIngress   = "agin_"
	PrefixAppSession     = "apps_" // application sessions, which the edge records (spec 2.7)
	PrefixAppUser        = "usr_"  // the application user of a session, an id the edge gives
	PrefixEndpoint       = "ep_"   // the endpoint of a session, an id the edge gives
	PrefixReservedDomain = "rd_"
	PrefixTLSCertificate = "cert_" // a certificate sluice issued for a reserved domain (spec 6.4)
	PrefixCredential     = "cr_"
	PrefixHTTPSEdge      = "edghts_"
	PrefixHTTPSEdgeRoute = "edghtsrt_"
	PrefixTunnelSession  = "ts_" // an agent's session with an edge, which the edge records
	// PrefixTunnelGroupBackend starts the ids of tunnel group backends,
	// the backends of HTTPS edge routes.
	PrefixTunnelGroupBackend = "bkdtg_"
)

// TimeLayout is the layout of event_timestamp: RFC 3339, UTC, milliseconds.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// SubjectPrefix starts the JetStream subject of every event:
// sluice.events.<account_id>.<event_type>.
const SubjectPrefix = "sluice.events."

// ErrBadID is returned when an id does not have its prefix and a valid KSUID.
var ErrBadID = errors.New("malformed id")

// NewID returns prefix followed by a new KSUID. Ids made within one second
// sort at random; IDs makes ids that sort by creation exactly.
func NewID(prefix string) string {
	return prefix + ksuid.New().String()
}

// CheckID reports whether id is prefix followed by a valid KSUID. It returns
// an error wrapping ErrBadID that says what is wrong.
func CheckID(prefix, id string) error {
	const ksuidLen = 27
	if len(id) != len(prefix)+ksuidLen || id[:len(prefix)] != prefix || !isBase62(id[len(prefix):]) {
		return fmt.Errorf("%w: %q is not %q followed by 27 base62 characters", ErrBadID, id, prefix)
	}
	if _, err := ksuid.Parse(id[len(prefix):]); err != nil {
		return fmt.Errorf("%w: %q: %v", ErrBadID, id, err)
	}
	return nil
}

// isBase62 reports whether s holds only 0-9, A-Z and a-z. ksuid.Parse does
// not check its alphabet, and ids go into subjects and headers.
func isBase62(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

// EventSubject returns the JetStream subject of an event of kind eventType of
// the account: sluice.events.<account_id>.<event_type>.
func EventSubject(accountID, eventType string) string {
	return SubjectPrefix + accountID + "." + eventType
}

// Ref names another resource.
type Ref struct {
	ID  string `json:"id"`
	URI string `json:"uri"`
}

// Principal says who made the change an audit event reports.
type Principal struct {
	ID         string `json:"id"`
	Subject    string `json:"subject"`
	Source     string `json:"source"`
	Credential Ref    `json:"credential"`
}

// Event is the envelope every event travels in, in JetStream and in every
// sink. Its JSON form has the fields in this order.
type Event struct {
	// ID is "ev_" and a KSUID; consumers deduplicate on it.
	ID string `json:"event_id"`
	// Type is the event kind, such as "http_request_complete.v0".
	Type string `json:"event_type"`
	// Timestamp is when the event happened; encoded in UTC with milliseconds.
	Timestamp time.Time `json:"event_timestamp"`
	// AccountID is the account the event belongs to.
	AccountID string `json:"account_id"`
	// Principal is who made an audited change, as a JSON object; nil (null)
	// for traffic events.
	Principal json.RawMessage `json:"principal"`
	// Object is the event's payload: a compact JSON object whose fields the
	// catalogue describes for the kind.
	Object json.RawMessage `json:"object"`
}

// envelopeOverhead is room for the envelope around an object: its field
// names, id, type, timestamp, account id and a null principal.
const envelopeOverhead = 256

// AppendJSON appends the envelope's compact JSON encoding to b. It does not
// validate the event; Principal and Object must be valid compact JSON.
func (e *Event) AppendJSON(b []byte) []byte {
	b = append(b, `{"event_id":`...)
	b = appendString(b, e.ID)
	b = append(b, `,"event_type":`...)
	b = appendString(b, e.Type)
	b = append(b, `,"event_timestamp":"`...)
	b = e.Timestamp.UTC().AppendFormat(b, TimeLayout)
	b = append(b, `","account_id":`...)
	b = appendString(b, e.AccountID)
	b = append(b, `,"principal":`...)
	if len(e.Principal) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, e.Principal...)
	}
	b = append(b, `,"object":`...)
	if len(e.Object) == 0 {
		b = append(b, "{}"...)
	} else {
		b = append(b, e.Object...)
	}
	return append(b, '}')
}

// MarshalJSON returns AppendJSON's encoding.
func (e Event) MarshalJSON() ([]byte, error) {
	return e.AppendJSON(make([]byte, 0, envelopeOverhead+len(e.Object)+len(e.Principal))), nil
}

// Encoded is an event that passed validation, in the form stored in
// JetStream. Build it with Catalogue.Encode or Catalogue.DecodeBatch.
type Encoded struct {
	// ID is the event's id, used as the JetStream message id.
	ID string
	// Type is the event kind.
	Type string
	// AccountID is the account the event belongs to.
	AccountID string
	// Data is the envelope's JSON encoding.
	Data []byte
	// UnknownFields counts the object's fields the catalogue does not declare;
	// they are kept and delivered.
	UnknownFields int

	givenID  bool // the producer gave the id (it may repeat within a batch)
	bySluice bool // made by EncodeBySluice: a kind only sluice emits
}

// Subject returns the JetStream subject the event is stored on.
func (e *Encoded) Subject() string { return EventSubject(e.AccountID, e.Type) }

// MsgID returns the event's JetStream message id (the Nats-Msg-Id header),
// which the stream deduplicates on within its duplicate window.
func (e *Encoded) MsgID() string { return MsgID(e.AccountID, e.ID) }

// MsgID returns the JetStream message id of the event eventID of the
// account: "<account_id>:<event_id>". Event ids are unique per account,
// not across accounts: an event of one account is never taken for a
// duplicate of another account's, so it is stored, and its answer tells
// nothing about what other accounts sent. Neither id can hold a colon (each
// is a prefix and base62 characters, and an account id is a subject
// token), so an id reads one way only.
func MsgID(accountID, eventID string) string { return accountID + ":" + eventID }

// appendString appends s as a JSON string. Ids, kinds and account ids need
// no escaping, so they are copied as they are; anything else goes through
// encoding/json (strconv's Go quoting is not always valid JSON).
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			quoted, _ := json.Marshal(s) // a string always marshals
			return append(b, quoted...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
