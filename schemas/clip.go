package schemas

import "strings"

// Clip returns v cut to 64 bytes of valid UTF-8 and "...", or v if it is
// no longer: a value a caller sent, quoted in a message or a log line
// without letting the caller choose how long the line is.
func Clip(v string) string {
	if len(v) <= 64 {
		return v
	}
	return strings.ToValidUTF8(v[:64], "") + "..."
}
