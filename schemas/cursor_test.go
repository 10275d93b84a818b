package schemas_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sluicehq/sluice/schemas"
)

// FuzzCursorSkip checks the cursor against encoding/json on any bytes:
// Skip of one value, then End, accepts exactly what json.Valid accepts in
// valid UTF-8 (encoding/json lets invalid UTF-8 through in strings, and
// nests deeper), refusing with a *schemas.SyntaxError; and of valid JSON,
// SkipTrusted stops where Skip does.
func FuzzCursorSkip(f *testing.F) {
	for _, seed := range []string{`{}`, `[1,2.5e-3,"x\u00e9",true,null]`, `{"a":{"b":[{}]}}`, `-0`, `"\ud800"`, `{"a" : 1 ,}`, `[01]`, " \t\n1 ",
		`{"a":1,"a":2}`, `"\ud834\udd1e"`, `1e999`, `[1,]`, `{"a":}`, `"\"\\"`, `"a\\\"b"`, `tru`, `nul`, `{"a" "b"}`, `[[[[]]]`,
		"\"\xff\"", "\"\x01\"", `{"}":"]","x":[{"[":"{"}]}`, `123abc`, `0.`, `1e`, `-`, `"\u12"`, strings.Repeat("[", 65) + strings.Repeat("]", 65)} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c schemas.Cursor
		c.Reset(data, 0)
		err := c.Skip()
		end := c.Pos()
		if err == nil {
			err = c.End()
		}
		valid := json.Valid(data) && utf8.Valid(data)
		switch {
		case err == nil && !valid:
			t.Fatalf("Skip accepted invalid JSON %q", data)
		case err != nil && valid && !strings.Contains(err.Error(), "nested deeper"):
			t.Fatalf("Skip refused valid JSON %q: %v", data, err)
		case err != nil:
			if _, ok := errors.AsType[*schemas.SyntaxError](err); !ok {
				t.Fatalf("Skip(%q) = %T %v, want a *schemas.SyntaxError", data, err, err)
			}
			return
		}
		c.Reset(data, 0)
		if err := c.SkipTrusted(); err != nil || c.Pos() != end {
			t.Fatalf("SkipTrusted(%q) ends at %d, %v; Skip at %d", data, c.Pos(), err, end)
		}
	})
}

// TestCursorSkipTrustedBounds checks that SkipTrusted of truncated JSON
// refuses it with a *schemas.SyntaxError rather than reading past it.
func TestCursorSkipTrustedBounds(t *testing.T) {
	for _, data := range []string{``, ` `, `"abc`, `"a\"`, `{"a":[1,2}`, `[{"x":"]"`, `}`, `,`} {
		var c schemas.Cursor
		c.Reset([]byte(data), 0)
		err := c.SkipTrusted()
		if _, ok := errors.AsType[*schemas.SyntaxError](err); !ok || c.Pos() > len(data) {
			t.Errorf("SkipTrusted(%q) = %v at %d, want a *schemas.SyntaxError", data, err, c.Pos())
		}
	}
}

// TestCursorKeys checks what NextKey returns of a name: its raw contents,
// escapes as written, and whether it holds any.
func TestCursorKeys(t *testing.T) {
	var c schemas.Cursor
	c.Reset([]byte(` { "a" : 1 , "b\u0063" :"x"}`), 0)
	if err := c.BeginObject(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for first := true; ; first = false {
		key, escaped, ok, err := c.NextKey(first)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		got = append(got, fmt.Sprintf("%s/%v/%s", key, escaped, c.Peek()))
		if err := c.Skip(); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{`a/false/a number`, `b\u0063/true/a string`}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("NextKey read %q, want %q", got, want)
	}
	if err := c.End(); err != nil {
		t.Errorf("End = %v", err)
	}
}

// ExampleCursor reads one member of an object, skipping the others
// without decoding them.
func ExampleCursor() {
	data := []byte(`{"conn":{"server_port":443},"http":{"request":{"method":"GET"}}}`)
	var c schemas.Cursor
	c.Reset(data, 0)
	if err := c.BeginObject(); err != nil {
		fmt.Println(err)
		return
	}
	for first := true; ; first = false {
		key, _, ok, err := c.NextKey(first)
		if err != nil || !ok {
			return
		}
		start := c.Pos()
		if err := c.Skip(); err != nil {
			fmt.Println(err)
			return
		}
		if string(key) == "http" {
			fmt.Printf("%s\n", data[start:c.Pos()])
		}
	}
	// Output: {"request":{"method":"GET"}}
}

// TestCursorReadInt32 checks which numbers ReadInt32 reads, and that it
// refuses the others with a *schemas.SyntaxError: at the start of a
// number that is no int32, which it consumes; where the JSON is wrong.
func TestCursorReadInt32(t *testing.T) {
	for _, tc := range []struct {
		data string
		want int32
		ok   bool
		at   int // the offset of the error, in data
	}{
		{"0", 0, true, 0},
		{"-0", 0, true, 0},
		{"7,", 7, true, 0},
		{"2147483647", 2147483647, true, 0},
		{"-2147483648", -2147483648, true, 0},
		{"2147483648", 0, false, 0},
		{"-2147483649", 0, false, 0},
		{"99999999999999999999999", 0, false, 0},
		{"1.0", 0, false, 0},
		{"1e2", 0, false, 0},
		{"-", 0, false, 1},
		{`"1"`, 0, false, 0},
		{" 1", 0, false, 0}, // no whitespace first, as ReadNumber
	} {
		var c schemas.Cursor
		c.Reset([]byte("x"+tc.data), 1)
		n, err := c.ReadInt32()
		if tc.ok {
			if err != nil || n != tc.want {
				t.Errorf("ReadInt32 of %s = %d, %v; want %d", tc.data, n, err, tc.want)
			}
			continue
		}
		if e, ok := errors.AsType[*schemas.SyntaxError](err); !ok || e.Offset != 1+tc.at {
			t.Errorf("ReadInt32 of %s = %d, %v; want a *schemas.SyntaxError at %d", tc.data, n, err, 1+tc.at)
		}
	}
}
