// Command slowtests passes the output of `go test -json` through as go
// test prints it without -v (a test's output only when it fails, and
// here when it skips, so that no skip is silent), and prints the slowest
// tests at the end, so that every run of `make test` says where the
// suite's minutes go.
//
//	go test -json ./... | go run ./internal/tools/slowtests
//
// With -n, it lists that many rather than ten:
//
//	go test -race -json ./internal/api | go run ./internal/tools/slowtests -n 40
//
// It exits 0 whatever the tests did: the caller takes go test's status
// (make test runs the pipe with pipefail).
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// shown is how many of the slowest tests are listed.
var shown = flag.Int("n", 10, "how many of the slowest tests to list")

// event is what `go test -json` (test2json) writes a line of.
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type timing struct {
	name    string // package and test
	seconds float64
	failed  bool
}

func main() {
	flag.Parse()
	timings, err := passThrough(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "slowtests:", err)
	}
	report(os.Stdout, timings)
}

// passThrough writes the output of each event of in to out, as go test
// prints it, and returns how long each top-level test took. A line that
// is not an event is written as it is.
func passThrough(in io.Reader, out io.Writer) ([]timing, error) {
	var timings []timing
	// held is the output of each top-level test running, its subtests'
	// included, by package and test.
	held := make(map[string][]string)
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for scanner.Scan() {
		line := scanner.Bytes()
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			fmt.Fprintf(out, "%s\n", line)
			continue
		}
		if ev.Test == "" {
			if ev.Output != "" && ev.Output != "PASS\n" {
				io.WriteString(out, ev.Output)
			}
			continue
		}
		top, _, sub := strings.Cut(ev.Test, "/")
		key := ev.Package + " " + top
		if ev.Output != "" {
			held[key] = append(held[key], ev.Output)
		}
		if sub || (ev.Action != "pass" && ev.Action != "fail" && ev.Action != "skip") {
			continue
		}
		if ev.Action != "pass" {
			for _, o := range held[key] {
				io.WriteString(out, o)
			}
		}
		delete(held, key)
		if ev.Action != "skip" {
			timings = append(timings, timing{name: key, seconds: ev.Elapsed, failed: ev.Action == "fail"})
		}
	}
	return timings, scanner.Err()
}

// report prints the slowest tests.
func report(out io.Writer, timings []timing) {
	if len(timings) == 0 {
		return
	}
	slices.SortFunc(timings, func(a, b timing) int { return cmp.Compare(b.seconds, a.seconds) })
	n := max(0, min(*shown, len(timings)))
	fmt.Fprintf(out, "\nthe %d slowest of %d tests:\n", n, len(timings))
	for _, t := range timings[:n] {
		status := ""
		if t.failed {
			status = " (failed)"
		}
		fmt.Fprintf(out, "%8.1fs  %s%s\n", t.seconds, t.name, status)
	}
}
