package authheader

import (
	"fmt"
	"strings"
)

// Form says the one form of Authorization sluice takes, for messages.
const Form = "send exactly one header Authorization: Bearer <API key>, with one space between Bearer and the key, and nothing after the key"

// MalformedError is a header of another form than Parse takes. Its
// message says what is wrong and Form, and never quotes the header, which
// may hold a key.
type MalformedError struct {
	// Why says what is wrong, after "the Authorization header", such as
	// "is sent more than once".
	Why string
}

func (e *MalformedError) Error() string {
	return "the Authorization header " + e.Why + ": " + Form
}

// Parse returns the bearer token of the values of a request's
// Authorization header: exactly one value, the scheme Bearer in any case
// (RFC 9110 11.1), one space, and a token of 1 to maxLength printable
// ASCII characters without spaces (the alphabet of API keys), nothing
// else. present is false when the request has no Authorization; a header
// of any other form is a *MalformedError.
func Parse(values []string, maxLength int) (token string, present bool, err error) {
	if len(values) == 0 {
		return "", false, nil
	}
	malformed := func(why string) (string, bool, error) {
		return "", true, &MalformedError{Why: why}
	}
	if len(values) > 1 {
		return malformed("is sent more than once")
	}
	scheme, token, ok := strings.Cut(values[0], " ")
	switch {
	case values[0] == "":
		return malformed("is empty")
	case !strings.EqualFold(scheme, "Bearer"):
		return malformed("does not start with the scheme Bearer and a space")
	case !ok || token == "":
		return malformed("has no API key after Bearer")
	case len(token) > maxLength:
		return malformed(fmt.Sprintf("holds more than an API key, which is at most %d characters", maxLength))
	}
	for i := range len(token) {
		if c := token[i]; c == ' ' || c == '\t' {
			return malformed("has a space or a tab around or in the API key")
		} else if c < ' ' || c > '~' {
			return malformed("has a character other than printable ASCII in the API key")
		}
	}
	return token, true, nil
}
