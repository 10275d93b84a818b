package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestPassThroughAndReport(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"start","Package":"p"}`,
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestA/sub","Elapsed":9}`,
		`{"Action":"pass","Package":"p","Test":"TestA","Elapsed":1.5}`,
		`{"Action":"output","Package":"p","Test":"TestB/sub","Output":"    b_test.go:3: it broke\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestB","Elapsed":12.25}`,
		`{"Action":"output","Package":"p","Test":"TestC","Output":"    c_test.go:3: no tool\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestC","Elapsed":0}`,
		`{"Action":"output","Package":"p","Output":"PASS\n"}`,
		`{"Action":"output","Package":"p","Output":"FAIL\tp\t13.8s\n"}`,
		`# a line go test wrote outside JSON`,
		`{"ImportPath":"q","Action":"build-output","Output":"q/x.go:1: syntax error\n"}`,
	}, "\n")
	var out bytes.Buffer
	timings, err := passThrough(strings.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	report(&out, timings)
	want := "    b_test.go:3: it broke\n    c_test.go:3: no tool\nFAIL\tp\t13.8s\n# a line go test wrote outside JSON\nq/x.go:1: syntax error\n" +
		"\nthe 2 slowest of 2 tests:\n    12.2s  p TestB (failed)\n     1.5s  p TestA\n"
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
}
