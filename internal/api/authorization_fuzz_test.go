package api

import (
	"regexp"
	"strings"
	"testing"
)

// oneAuthorizationForm is the one form of Authorization, written apart from
// parseAuthorization as its oracle: Bearer in any case, one space, and 1
// to 256 printable ASCII characters without spaces.
var oneAuthorizationForm = regexp.MustCompile(`^(?i:bearer) [!-~]{1,256}$`)

// FuzzParseAuthorization checks parseAuthorization against the form: it
// takes exactly the values of that form, sent once, and returns their
// token; it refuses every other value, and two values, with
// CodeAuthMalformed and a message that does not quote the value; and
// the canonical "Bearer <token>" it leads to is taken with the same token.
func FuzzParseAuthorization(f *testing.F) {
	for _, seed := range []string{
		"Bearer sk_abc", "bearer sk_abc", "BEARER sk_abc", "Bearer  sk_abc", "Bearer\tsk_abc", "Bearer sk_abc ",
		"Bearer sk_abc x", "Bearer sk_abc,Bearer sk_abc", "Basic sk_abc", "Bearer", "Bearer ", "", "sk_abc",
		"Bearer sk_\x00abc", "Bearer sk_é", "Bearer " + strings.Repeat("k", 256), "Bearer " + strings.Repeat("k", 257),
	} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	f.Fuzz(func(t *testing.T, value string, twice bool) {
		values := []string{value}
		if twice {
			values = append(values, value)
		}
		token, present, e := parseAuthorization(values)
		if !present {
			t.Fatalf("%q: not present", values)
		}
		if want := !twice && oneAuthorizationForm.MatchString(value); want != (e == nil) {
			t.Fatalf("%q: token %q, error %v; want taken %v", values, token, e, want)
		}
		if e != nil {
			if e.Code != CodeAuthMalformed || e.Code.Status() != 400 || token != "" || !strings.Contains(e.Msg, "Authorization: Bearer <API key>") {
				t.Fatalf("%q: %v, token %q", values, e, token)
			}
			if _, secret, _ := strings.Cut(value, " "); len(secret) >= 8 && strings.Contains(e.Msg, secret) {
				t.Fatalf("%q: the message quotes the value: %s", values, e.Msg)
			}
			return
		}
		if token != value[len("Bearer "):] {
			t.Fatalf("%q: token %q", value, token)
		}
		if again, _, e := parseAuthorization([]string{"Bearer " + token}); again != token || e != nil {
			t.Fatalf("the canonical form of %q: %q, %v", value, again, e)
		}
	})
}
