package main

import (
	"io"
	"log/slog"
	"runtime/debug"
	"testing"
)

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
