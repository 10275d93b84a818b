package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// FuzzScanner checks the scanner against encoding/json: it accepts exactly
// the valid JSON in valid UTF-8, short of the nesting limit, and of that
// refuses (in invalid, as a *FieldError) exactly what refusedJSON finds:
// an object with a member name twice, a lone surrogate escape, a number
// beyond float64's range.
func FuzzScanner(f *testing.F) {
	for _, seed := range []string{`{}`, `[1,2.5e-3,"x\u00e9",true,null]`, `{"a":{"b":[{}]}}`, `-0`, `"\ud800"`, `{"a" : 1 ,}`, `[01]`, " \t\n1 ",
		`{"a":1,"a":2}`, `{"a":{"b":1,"c":{"b":2}},"b":[{"a":1},{"a":1,"a":1}]}`, `{"a":1,"\u0061":2}`,
		`"\ud834\udd1e"`, `"\ud834\u0041"`, `"\udd1e"`, `"\ud800\ud800\udc00"`, `{"\udbff":0}`, `"\ud800\u"`,
		`1e999`, `-1e400`, `1e-400`, `1.7976931348623157e308`, `1.7976931348623159e308`, `0e99999999999999999999`, `0.0001e312`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s Cursor
		s.resetChecking(data)
		err := s.Skip()
		if err == nil {
			err = s.End()
		}
		valid := json.Valid(data) && utf8.Valid(data)
		switch {
		case err == nil && !valid:
			t.Fatalf("scanner accepted invalid JSON %q", data)
		case err != nil && valid && !strings.Contains(err.Error(), "nested deeper"):
			t.Fatalf("scanner rejected valid JSON %q: %v", data, err)
		case err != nil:
			return
		}
		reasons := refusedJSON(t, data)
		var fe *FieldError
		if s.invalid != nil && !errors.As(s.invalid, &fe) {
			t.Fatalf("%q: refused with %T %v, want a *FieldError", data, s.invalid, s.invalid)
		}
		switch {
		case len(reasons) == 0 && s.invalid != nil:
			t.Fatalf("scanner refused %q, which every reader reads alike: %v", data, s.invalid)
		case len(reasons) > 0 && s.invalid == nil:
			t.Fatalf("scanner accepted %q, which readers read differently: %v", data, reasons)
		case len(reasons) == 1 && !strings.Contains(s.invalid.Error(), reasonText[reasons[0]]):
			t.Fatalf("%q is %s, but the scanner says %v", data, reasons[0], s.invalid)
		}
	})
}

// Reasons of refusedJSON, and what the scanner's message says for each.
const (
	reasonDuplicate = "a member name twice"
	reasonSurrogate = "a lone surrogate"
	reasonRange     = "a number beyond float64"
)

var reasonText = map[string]string{
	reasonDuplicate: "appears twice",
	reasonSurrogate: "surrogate pair without its other half",
	reasonRange:     "beyond the range of a float64",
}

// refusedJSON returns the reasons why readers read data, valid JSON, in
// different ways, found independently of the scanner: member names
// (decoded) repeated in an object and numbers that strconv.ParseFloat
// reads with ErrRange, by encoding/json's tokens; lone surrogates by
// decoding every \u escape of the raw strings with unicode/utf16.
func refusedJSON(t *testing.T, data []byte) []string {
	t.Helper()
	found := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type container struct {
		object bool
		names  map[string]bool
		key    bool // the next string token of an object is a name
	}
	var stack []*container
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("encoding/json cannot read %q, which it found valid: %v", data, err)
		}
		var top *container
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		isName := top != nil && top.object && top.key
		if top != nil && top.object {
			top.key = !top.key
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, &container{object: true, names: map[string]bool{}, key: true})
			case '[':
				stack = append(stack, &container{})
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].key = true // the value ended
				}
			}
			continue
		case string:
			if isName {
				if top.names[v] {
					found[reasonDuplicate] = true
				}
				top.names[v] = true
			}
		case json.Number:
			if _, err := strconv.ParseFloat(string(v), 64); err != nil {
				found[reasonRange] = true
			}
		}
	}
	if hasLoneSurrogate(data) {
		found[reasonSurrogate] = true
	}
	var reasons []string
	for _, r := range []string{reasonDuplicate, reasonSurrogate, reasonRange} {
		if found[r] {
			reasons = append(reasons, r)
		}
	}
	return reasons
}

// hasLoneSurrogate reports whether a string of data, valid JSON, has a \u
// escape of a surrogate that is not half of a pair.
func hasLoneSurrogate(data []byte) bool {
	inString := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			inString = !inString
		case c == '\\' && inString:
			i++
			if data[i] != 'u' {
				continue
			}
			r1 := hexRune(data[i+1 : i+5])
			i += 4
			if !utf16.IsSurrogate(r1) {
				continue
			}
			if i+6 < len(data) && data[i+1] == '\\' && data[i+2] == 'u' {
				if r := utf16.DecodeRune(r1, hexRune(data[i+3:i+7])); r != unicode.ReplacementChar {
					i += 6
					continue
				}
			}
			return true
		}
	}
	return false
}

func hexRune(b []byte) rune {
	v, _ := strconv.ParseUint(string(b), 16, 32)
	return rune(v)
}

// FuzzDecodeBatch feeds arbitrary bodies to the ingest decoder: it must never
// panic, and every event it accepts must be a valid, compact envelope that
// decodes to what the catalogue declares, that every JSON reader reads
// alike (refusedJSON finds nothing), and that is not of a kind only sluice
// emits.
func FuzzDecodeBatch(f *testing.F) {
	f.Add([]byte(`[{"event_type":"http_request_complete.v0","object":{"conn":{"server_port":443}}}]`), false)
	f.Add([]byte(`[{"object":{"id":"x","sources":[{"type":"t"}]},"event_type":"event_subscription_created.v0","principal":{"id":"ak"}}]`), false)
	f.Add([]byte("{\"event_type\":\"tcp_connection_closed.v0\",\"object\":{ \"conn\" : { \"bytes_in\" : 1 } }}\n{}\n"), true)
	f.Add([]byte(`[{"event_type":"tunnel_credential_created.v0","object":{},"event_timestamp":"2026-11-22T10:04:05+01:00","event_id":"ev_2Yq3A9cC0c7ZkU6e7d0a9oKf1xG"}]`), false)
	f.Add([]byte(`[{"event_type":"tunnel_credential_created.v0","object":{"conn":{"server_port":"x"}},"event_type":"http_request_complete.v0"}]`), false)
	f.Add([]byte(`[{"event_type":"tunnel_credential_created.v0","object":{"token":"sk_x"},"principal":null}]`), false)
	f.Add([]byte(`[{"event_type":"http_request_complete.v0","object":{"conn":{"server_name":"a.example.com","server_name":"b.example.org"}}}]`), false)
	f.Add([]byte(`{"event_type":"tcp_connection_closed.v0","object":{"x":{"y":[{"a":"\ud800","a":1e999}]}}}`), true)
	f.Add([]byte(`[{"event_type":"tcp_connection_closed.v0","object":{"\udc00":-1e400,"n":1e-400,"s":"\ud834\udd1e"}}]`), false)
	f.Add([]byte(`[{"event_type":"ip_policy_updated.v0","principal":{"id":"a","i\u0064":"b"},"object":{}}]`), false)
	f.Add([]byte(`[{"event_type":"api_key_deleted.v0","principal":{"id":"ak_1","source":"API"},"object":{"id":"ak_1","token":null}}]`), false)
	c := Default()
	f.Fuzz(func(t *testing.T, body []byte, ndjson bool) {
		b, err := c.DecodeBatch(body, DecodeOptions{AccountID: testAccount, NDJSON: ndjson})
		if err != nil {
			var se *SyntaxError
			var le *LimitError
			if !errors.As(err, &se) && !errors.As(err, &le) && !errors.Is(err, ErrEmptyBatch) {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			return
		}
		for _, ev := range b.Events {
			var env struct {
				ID        string          `json:"event_id"`
				Type      string          `json:"event_type"`
				Timestamp string          `json:"event_timestamp"`
				Account   string          `json:"account_id"`
				Object    json.RawMessage `json:"object"`
			}
			if err := json.Unmarshal(ev.Data, &env); err != nil {
				t.Fatalf("accepted event encodes to invalid JSON: %v\n%s", err, ev.Data)
			}
			if env.ID != ev.ID || env.Type != ev.Type || env.Account != testAccount {
				t.Fatalf("envelope %s disagrees with %+v", ev.Data, ev)
			}
			if len(env.Timestamp) != len(TimeLayout) {
				t.Fatalf("timestamp %q not in layout", env.Timestamp)
			}
			if reasons := refusedJSON(t, ev.Data); len(reasons) > 0 {
				t.Fatalf("accepted an event that readers read differently (%v):\n%s", reasons, ev.Data)
			}
			k, _ := c.Kind(env.Type)
			if k.EmittedBySluice {
				t.Fatalf("accepted an event of %s, which only sluice emits", k.Name)
			}
			if _, err := k.ValidateObject(env.Object); err != nil {
				t.Fatalf("stored object does not validate: %v", err)
			}
			again, err := c.DecodeBatch(append([]byte{'['}, append(ev.Data, ']')...), DecodeOptions{AccountID: testAccount})
			if err != nil || len(again.Errors) > 0 || !bytes.Equal(again.Events[0].Data, ev.Data) {
				t.Fatalf("stored event does not ingest unchanged: %v %v\n%s", err, again.Errors, ev.Data)
			}
			var buf bytes.Buffer
			if err := json.Compact(&buf, ev.Data); err != nil || buf.String() != string(ev.Data) {
				t.Fatalf("stored event is not compact: %s", ev.Data)
			}
		}
	})
}
