package authheader

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

// maxLength is the longest API key, store.MaxTokenLength, which internal/api
// passes to Parse.
const maxLength = 256

// oneAuthorizationForm is the one form of Authorization, written apart from
// Parse as its oracle: Bearer in any case, one space, and 1 to 256
// printable ASCII characters without spaces.
var oneAuthorizationForm = regexp.MustCompile(`^(?i:bearer) [!-~]{1,256}$`)

// reasons are the reasons a MalformedError may give: fixed texts, so that
// no message quotes the header, which may hold a key.
var reasons = map[string]bool{
	"is sent more than once": true,
	"is empty":               true,
	"does not start with the scheme Bearer and a space":           true,
	"has no API key after Bearer":                                 true,
	"holds more than an API key, which is at most 256 characters": true,
	"has a space or a tab around or in the API key":               true,
	"has a character other than printable ASCII in the API key":   true,
}

// FuzzParseAuthorization checks Parse against the form: it takes exactly
// the values of that form, sent once, and returns their token; it refuses
// every other value, and two values, with a *MalformedError whose message
// says the form and one of the fixed reasons, so never quotes the value;
// and the canonical
// "Bearer <token>" it leads to is taken with the same token.
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
		token, present, err := Parse(values, maxLength)
		if !present {
			t.Fatalf("%q: not present", values)
		}
		if want := !twice && oneAuthorizationForm.MatchString(value); want != (err == nil) {
			t.Fatalf("%q: token %q, error %v; want taken %v", values, token, err, want)
		}
		if err != nil {
			var malformed *MalformedError
			if !errors.As(err, &malformed) || token != "" || err.Error() != "the Authorization header "+malformed.Why+": "+Form {
				t.Fatalf("%q: %v, token %q", values, err, token)
			}
			if !reasons[malformed.Why] {
				t.Fatalf("%q: the reason %q is not one of the fixed texts", values, malformed.Why)
			}
			return
		}
		if token != value[len("Bearer "):] {
			t.Fatalf("%q: token %q", value, token)
		}
		if again, _, err := Parse([]string{"Bearer " + token}, maxLength); again != token || err != nil {
			t.Fatalf("the canonical form of %q: %q, %v", value, again, err)
		}
	})
}
