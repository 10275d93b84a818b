package apiconv

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/errors.md")

const errorsDoc = "../../docs/errors.md"

func TestErrorsDocIsCurrent(t *testing.T) {
	want := errorsMarkdown()
	if *update {
		if err := os.WriteFile(errorsDoc, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(errorsDoc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run `make docs` (go test ./internal/apiconv -run TestErrorsDocIsCurrent -update)", errorsDoc)
	}
}

func TestEveryCodeHasAStatus(t *testing.T) {
	for c, info := range codes {
		if info.status < 400 || info.when == "" {
			t.Errorf("%s: status %d, when %q", c, info.status, info.when)
		}
	}
}

// errorsMarkdown renders docs/errors.md: every error code, its status and
// when it is returned.
func errorsMarkdown() []byte {
	var b bytes.Buffer
	b.WriteString("# Error codes\n\n")
	b.WriteString("<!-- Generated from apiconv/errors.go by `make docs`; do not edit. -->\n\n")
	b.WriteString("Every error response of the sluice API has this body, and every response, error or not,\n")
	b.WriteString("carries a `Service-Operation-Id` header with the same operation id:\n\n")
	b.WriteString("```json\n{\"error_code\": \"ERR_SLUICE_301\", \"status_code\": 400,\n \"msg\": \"1 of 2 events are invalid, so none was stored; ...\",\n \"details\": {\"operation_id\": \"op_2Yq...\", \"errors\": \"[{\\\"index\\\":1,\\\"error\\\":\\\"object.conn.server_port: expected int32, got a string\\\"}]\"}}\n```\n\n")
	b.WriteString("`msg` says what is wrong and how to fix it; it is for people and may change. `error_code` is\n")
	b.WriteString("stable: branch on it in code.\n\n")
	b.WriteString("`details` is an object of strings (`map[string]string`), as the official API clients decode\n")
	b.WriteString("it: `operation_id`, and the fields a code adds, such as `field` (a body field's JSON path) or\n")
	b.WriteString("`parameter` (a query parameter). A value that is not text by nature is its compact JSON text,\n")
	b.WriteString("which one JSON decoding reads back: a number such as `details.max` is `\"100\"`, a list such as\n")
	b.WriteString("`details.subscriptions` is `\"[\\\"esb_1\\\",\\\"esb_2\\\"]\"`, and `details.errors` (`ERR_SLUICE_301`) and\n")
	b.WriteString("`details.issues` (`ERR_SLUICE_335`) are lists of objects, as above.\n\n")
	b.WriteString("| code | HTTP status | when |\n|---|---|---|\n")
	all := make([]Code, 0, len(codes))
	for c := range codes {
		all = append(all, c)
	}
	slices.Sort(all)
	for _, c := range all {
		fmt.Fprintf(&b, "| `%s` | %d | %s |\n", c, codes[c].status, codes[c].when)
	}
	return b.Bytes()
}
