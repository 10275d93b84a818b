package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/strictjson"
	"github.com/sluicehq/sluice/schemas"
)

// TestStrictErrors checks that every kind of strictjson.Error becomes a
// documented 400 or 413 code with a message, and that one about a member
// names it in details.field and in the message.
func TestStrictErrors(t *testing.T) {
	member := "sources[1].type"
	for _, test := range []struct {
		name string
		err  *strictjson.Error
		want apiconv.Code
	}{
		{"empty", &strictjson.Error{Kind: strictjson.Empty, Err: io.EOF}, apiconv.CodeMalformedRequest},
		{"not an object", &strictjson.Error{Kind: strictjson.NotObject, Start: '['}, apiconv.CodeMalformedRequest},
		{"trailing data", &strictjson.Error{Kind: strictjson.Trailing, Offset: 2}, apiconv.CodeMalformedRequest},
		{"unknown member", &strictjson.Error{Kind: strictjson.UnknownMember, Member: member}, apiconv.CodeUnknownField},
		{"same but case", &strictjson.Error{Kind: strictjson.SameButCase, Member: member, Candidate: "Type"}, apiconv.CodeUnknownField},
		{"duplicate", &strictjson.Error{Kind: strictjson.Duplicate, Member: member}, apiconv.CodeMalformedRequest},
		{"wrong type", &strictjson.Error{Kind: strictjson.WrongType, Member: member, Want: "string", Got: "number"}, apiconv.CodeWrongType},
		{"out of range", &strictjson.Error{Kind: strictjson.OutOfRange, Member: member, Want: "a whole number from 0 to 255", Got: "number 256"}, apiconv.CodeWrongType},
		{"too deep", &strictjson.Error{Kind: strictjson.TooDeep, Member: member}, apiconv.CodeMalformedRequest},
		{"bad text", &strictjson.Error{Kind: strictjson.BadText, Err: schemas.CheckJSON([]byte("{\"a\":\"\xff\"}"))}, apiconv.CodeMalformedRequest},
		{"ends early", &strictjson.Error{Kind: strictjson.Unreadable, Err: io.ErrUnexpectedEOF}, apiconv.CodeMalformedRequest},
		{"syntax", &strictjson.Error{Kind: strictjson.Unreadable, Err: json.Unmarshal([]byte("{x"), new(any))}, apiconv.CodeMalformedRequest},
		{"too large", &strictjson.Error{Kind: strictjson.Unreadable, Err: &http.MaxBytesError{Limit: maxRequestBytes}}, apiconv.CodeRequestTooLarge},
	} {
		t.Run(test.name, func(t *testing.T) {
			if test.err.Err == nil && (test.err.Kind == strictjson.BadText || test.err.Kind == strictjson.Unreadable) {
				t.Fatal("the test's error has no error underneath")
			}
			e := strictError(test.err)
			if e.Code != test.want {
				t.Fatalf("code %v, want %v (%v)", e.Code, test.want, e)
			}
			if e.Code.Status() == 0 || e.Msg == "" {
				t.Fatalf("error %v is not documented or has no message", e)
			}
			if status := e.Code.Status(); status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge {
				t.Fatalf("error %v has status %d", e, status)
			}
			if test.err.Member != "" {
				field, ok := e.Details["field"]
				if !ok || field != test.err.Member || !strings.Contains(e.Msg, field) && !strings.Contains(e.Msg, strconv.Quote(field)) {
					t.Fatalf("error %v does not name its field %q in details.field (%v)", e, test.err.Member, e.Details)
				}
			}
		})
	}
	t.Run("echo", func(t *testing.T) {
		changed := echoed{pathEcho: pathEcho{member: "id", param: "id"}, value: "ep_1"}.changed("ep_2")
		if e := strictError(changed); !errors.Is(e, changed) {
			t.Fatalf("the echo's error %v became %v", changed, e)
		}
	})
}
