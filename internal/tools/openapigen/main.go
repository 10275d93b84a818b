package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/sluicehq/sluice/internal/resource"
)

func main() {
	source := flag.String("source", "openapi/source.yaml", "the hand-written part of the document")
	wire := flag.String("wire", "../apiwire", "the directory of package apiwire's source")
	out := flag.String("out", "openapi.yaml", "the document to write")
	flag.Parse()
	if err := run(*source, *wire, *out); err != nil {
		fmt.Fprintln(os.Stderr, "openapigen:", err)
		os.Exit(1)
	}
}

// run writes out from source, the families of package resource and
// apiwire's source in the directory wire.
func run(source, wire, out string) error {
	src, err := os.ReadFile(source)
	if err != nil {
		return err
	}
	docs, err := readWire(wire)
	if err != nil {
		return err
	}
	doc, err := generate(src, resource.Families(), docs)
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	return os.WriteFile(out, doc, 0o644)
}
