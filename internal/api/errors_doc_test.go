package api

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/errors.md")

const errorsDoc = "../../docs/errors.md"

func TestErrorsDocIsCurrent(t *testing.T) {
	want := ErrorsMarkdown()
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
		t.Fatalf("%s is stale: run `make docs` (go test ./internal/api -run TestErrorsDocIsCurrent -update)", errorsDoc)
	}
}

func TestEveryCodeHasAStatus(t *testing.T) {
	for c, info := range codes {
		if info.status < 400 || info.when == "" {
			t.Errorf("%s: status %d, when %q", c, info.status, info.when)
		}
	}
}
