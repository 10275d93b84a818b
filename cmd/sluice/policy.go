package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/trafficpolicy"
)

// newPolicyCommand returns `sluice policy`, which works on traffic policy
// documents offline.
func newPolicyCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Work on traffic policy documents, the rules serve --traffic-policy applies to its HTTP requests",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "check FILE",
		Short: "Check a traffic policy document offline, as serve --traffic-policy would load it",
		Long: "Check a traffic policy document (YAML or JSON) offline, as serve --traffic-policy loads it: " +
			"print each mistake as FILE:LINE:COLUMN: path: what is wrong and what is allowed, and exit 1; " +
			"exit 0 when the document is right. docs/operations.md describes the document.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := loadPolicyFile(args[0])
			if err != nil {
				return err
			}
			onRequest, onResponse := p.Rules()
			fmt.Fprintf(cmd.OutOrStdout(), "%s: a valid traffic policy: %s in on_http_request, %d in on_http_response\n",
				args[0], count(int64(onRequest), "rule", "rules"), onResponse)
			return nil
		},
	})
	return cmd
}

// loadPolicyFile reads and parses a traffic policy document. Its error
// names the file, and each mistake's line and column in it.
func loadPolicyFile(path string, opts ...trafficpolicy.Option) (*trafficpolicy.Policy, error) {
	doc, err := readPolicyFile(path)
	if err != nil {
		return nil, err
	}
	return parsePolicy(path, doc, opts...)
}

// readPolicyFile reads a policy document, at most
// trafficpolicy.MaxDocumentBytes and one more, which Parse refuses.
func readPolicyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("traffic policy: %w", err)
	}
	defer f.Close()
	doc, err := io.ReadAll(io.LimitReader(f, trafficpolicy.MaxDocumentBytes+1))
	if err != nil {
		return nil, fmt.Errorf("traffic policy: reading %s: %w", path, err)
	}
	return doc, nil
}

// parsePolicy parses the document read from path.
func parsePolicy(path string, doc []byte, opts ...trafficpolicy.Option) (*trafficpolicy.Policy, error) {
	p, err := trafficpolicy.Parse(doc, opts...)
	var perr *trafficpolicy.PolicyError
	if errors.As(err, &perr) {
		return nil, &policyFileError{path: path, err: perr}
	}
	if err == nil && p.ConnectRules() > 0 {
		return nil, fmt.Errorf("traffic policy %s: on_tcp_connect runs on TCP endpoints of the edge, and sluice's API is HTTP: move its rules to on_http_request", path)
	}
	return p, err
}

// policyFileError is a policy document with mistakes, each shown as
// FILE:LINE:COLUMN: path: message, as compilers do, for editors to jump to.
type policyFileError struct {
	path string
	err  *trafficpolicy.PolicyError
}

func (e *policyFileError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s is not a valid traffic policy (%s):", e.path, count(int64(len(e.err.Problems)), "mistake", "mistakes"))
	for _, p := range e.err.Problems {
		b.WriteString("\n" + e.path + ":")
		if p.Line > 0 {
			b.WriteString(strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Column) + ":")
		}
		b.WriteString(" ")
		if p.Path != "" {
			b.WriteString(p.Path + ": ")
		}
		b.WriteString(p.Msg)
	}
	return b.String()
}

func (e *policyFileError) Unwrap() error { return e.err }
