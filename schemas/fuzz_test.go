package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzScanner checks the scanner against encoding/json: it accepts exactly
// the valid JSON in valid UTF-8, short of the nesting limit.
func FuzzScanner(f *testing.F) {
	for _, seed := range []string{`{}`, `[1,2.5e-3,"x\u00e9",true,null]`, `{"a":{"b":[{}]}}`, `-0`, `"\ud800"`, `{"a" : 1 ,}`, `[01]`, " \t\n1 "} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s scanner
		s.reset(data)
		err := s.skip()
		if err == nil {
			err = s.end()
		}
		valid := json.Valid(data) && utf8.Valid(data)
		switch {
		case err == nil && !valid:
			t.Fatalf("scanner accepted invalid JSON %q", data)
		case err != nil && valid && !strings.Contains(err.Error(), "nested deeper"):
			t.Fatalf("scanner rejected valid JSON %q: %v", data, err)
		}
	})
}

// FuzzDecodeBatch feeds arbitrary bodies to the ingest decoder: it must never
// panic, and every event it accepts must be a valid, compact envelope that
// decodes to what the catalogue declares.
func FuzzDecodeBatch(f *testing.F) {
	f.Add([]byte(`[{"event_type":"http_request_complete.v0","object":{"conn":{"server_port":443}}}]`), false)
	f.Add([]byte(`[{"object":{"id":"x","sources":[{"type":"t"}]},"event_type":"event_subscription_created.v0","principal":{"id":"ak"}}]`), false)
	f.Add([]byte("{\"event_type\":\"tcp_connection_closed.v0\",\"object\":{ \"conn\" : { \"bytes_in\" : 1 } }}\n{}\n"), true)
	f.Add([]byte(`[{"event_type":"tunnel_credential_created.v0","object":{},"event_timestamp":"2026-11-22T10:04:05+01:00","event_id":"ev_2Yq3A9cC0c7ZkU6e7d0a9oKf1xG"}]`), false)
	f.Add([]byte(`[{"event_type":"tunnel_credential_created.v0","object":{"conn":{"server_port":"x"}},"event_type":"http_request_complete.v0"}]`), false)
	f.Add([]byte(`[{"event_type":"tunnel_credential_created.v0","object":{"token":"sk_x"},"principal":null}]`), false)
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
			k, _ := c.Kind(env.Type)
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
