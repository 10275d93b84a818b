package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"
)

// quietFlag is --quiet of a create command, for scripts:
// ID=$(sluice destinations create -q ...).
type quietFlag bool

func (q *quietFlag) register(fl *pflag.FlagSet) {
	fl.BoolVarP((*bool)(q), "quiet", "q", false, "print only the new id, for scripts: ID=$(sluice ... create -q ...); then the token on a second line, for a resource whose token is shown only at its creation")
}

// printCreatedID prints the id of a resource the API created, for create
// --quiet.
func printCreatedID(w io.Writer, raw []byte) error {
	var created struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &created); err != nil || created.ID == "" {
		return fmt.Errorf("the API's answer has no id: %s", raw)
	}
	_, err := fmt.Fprintln(w, created.ID)
	return err
}

// printCreatedWithToken prints, for create --quiet of a resource whose
// token is shown only when it is created (an API key, a tunnel credential,
// an account), its id and then the token, one a line: the token cannot be
// had later, so --quiet keeps it, after the id as every create prints it.
func printCreatedWithToken(w io.Writer, id, token string) error {
	_, err := fmt.Fprintf(w, "%s\n%s\n", id, token)
	return err
}

// createdWithToken prints the answer to the create of a resource whose
// token the API shows only in that answer: an API key, a tunnel
// credential.
type createdWithToken[T any] struct {
	// kind and short name the resource in errors: "an API key", "key".
	kind, short string
	// warning tells the operator to keep the token now.
	warning string
	// id, token and fields read the resource; fields never the token.
	id     func(T) string
	token  func(T) *string
	fields func(T) []resourceField
}

// print prints a new resource and its token to stdout, as a table or as
// the API's JSON, or with quiet its id and token alone, a line each; in
// JSON, the warning that the token is shown only once goes to stderr.
func (p createdWithToken[T]) print(stdout, stderr io.Writer, a answer[T], asJSON, quiet bool) error {
	if a.err != nil {
		return fmt.Errorf("the API's answer is not %s: %w", p.kind, a.err)
	}
	id, token := p.id(a.v), p.token(a.v)
	if token == nil || *token == "" {
		return fmt.Errorf("the API created the %s %s but its answer holds no token: delete the %s, and check that --api-url is sluice", p.short, id, p.short)
	}
	if quiet {
		return printCreatedWithToken(stdout, id, *token)
	}
	if asJSON {
		fmt.Fprintln(stderr, "sluice: the token is shown only this once; keep it secret")
		return writeRawJSON(stdout, a.raw)
	}
	if err := printFields(stdout, p.fields(a.v)); err != nil {
		return err
	}
	_, err := fmt.Fprintf(stdout, "\n%s\n\n    %s\n\n", p.warning, *token)
	return err
}

// printFields prints the fields of one resource, a name and a value a line.
func printFields(w io.Writer, fields []resourceField) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, f := range fields {
		fmt.Fprintf(tw, "%s\t%s\n", f.name, cell(f.value))
	}
	return tw.Flush()
}

// printTable prints a header and rows of cells.
func printTable(w io.Writer, columns []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(columns, "\t"))
	for _, row := range rows {
		cells := make([]string, len(row))
		for i, c := range row {
			cells[i] = cell(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// cell is s as a table shows it: "-" when empty, and on one line, as tabs
// and line breaks would break the table.
func cell(s string) string {
	if s == "" {
		return "-"
	}
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// writeRawJSON writes a JSON answer of the API as it is, on its own line.
func writeRawJSON(w io.Writer, raw []byte) error {
	raw = bytes.TrimRight(raw, "\r\n")
	_, err := w.Write(append(raw, '\n'))
	return err
}

// writeJSONValue writes v as compact JSON on its own line.
func writeJSONValue(w io.Writer, v any) error {
	raw, err := encodeJSON(v)
	if err != nil {
		return err
	}
	return writeRawJSON(w, raw)
}

// encodeJSON encodes v as compact JSON, leaving <, > and & as they are so
// that CEL filters stay readable.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding JSON: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// decodeObject decodes text holding exactly one JSON object. Numbers stay
// as they were written.
func decodeObject(text []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty: want a JSON object such as {\"description\": \"...\"}")
		}
		return nil, fmt.Errorf("not well-formed JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one JSON value: want a single JSON object")
	}
	object, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object: want one such as {\"description\": \"...\"}")
	}
	return object, nil
}
