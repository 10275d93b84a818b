package main

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// fakeReport is a benchmark report that prints its form.
type fakeReport struct{}

func (fakeReport) Format(w io.Writer) error    { _, err := io.WriteString(w, "table\n"); return err }
func (fakeReport) WriteJSON(w io.Writer) error { _, err := io.WriteString(w, "{}\n"); return err }

func TestPrintReport(t *testing.T) {
	errFloor := errors.New("below floor")
	for _, tc := range []struct {
		asJSON  bool
		verdict error
		out     string
	}{
		{false, nil, "table\n"},
		{true, nil, "{}\n"},
		{false, errFloor, "table\n"},
	} {
		cmd := &cobra.Command{}
		var out bytes.Buffer
		cmd.SetOut(&out)
		err := printReport(cmd, fakeReport{}, tc.asJSON, "bench x", tc.verdict)
		if out.String() != tc.out {
			t.Errorf("printed %q, want %q", out.String(), tc.out)
		}
		if tc.verdict == nil && err != nil || tc.verdict != nil && (!errors.Is(err, errFloor) || !strings.HasPrefix(err.Error(), "bench x: ")) {
			t.Errorf("printReport = %v, want %v named after the command", err, tc.verdict)
		}
	}
}
