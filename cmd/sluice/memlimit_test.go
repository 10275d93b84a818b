package main

import (
	"io"
	"log/slog"
	"runtime/debug"
	"testing"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"512MiB": 512 << 20, "2GiB": 2 << 30, "100KiB": 100 << 10, "500MB": 500e6, "1GB": 1e9,
		"1048576": 1 << 20, "64B": 64, "0": 0,
	} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "lots", "-1MiB", "1.5GiB", "10TiB", "99999999999GiB"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) took it", in)
		}
	}
}

func TestApplyMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := applyMemoryLimit("300MiB", log); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetMemoryLimit(-1); got != 300<<20 {
		t.Fatalf("limit %d after --memory-limit 300MiB", got)
	}
	if err := applyMemoryLimit("many", log); err == nil {
		t.Fatal("--memory-limit many was taken")
	}
}
