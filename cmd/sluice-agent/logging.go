package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"
)

// newLogger returns the logger that target, format and level say, and a
// function that closes its file. target is stdout, stderr, false (no
// log) or a file's path.
func newLogger(target, format, level string, stdout, stderr io.Writer) (*slog.Logger, func(), error) {
	var lvl slog.Level
	switch strings.ToLower(level) {
	case "debug":
		lvl = slog.LevelDebug
	case "", "info":
		lvl = slog.LevelInfo
	case "warn":
		lvl = slog.LevelWarn
	case "error", "crit":
		lvl = slog.LevelError
	default:
		return nil, nil, fmt.Errorf("log level %q: give debug, info, warn or error", level)
	}
	var w io.Writer
	closeFn := func() {}
	switch target {
	case "false", "":
		return slog.New(slog.DiscardHandler), closeFn, nil
	case "stdout":
		w = stdout
	case "stderr":
		w = stderr
	default:
		f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("opening the log file: %w", err)
		}
		w, closeFn = f, func() { _ = f.Close() }
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), closeFn, nil
	case "logfmt", "":
		return slog.New(slog.NewTextHandler(w, opts)), closeFn, nil
	case "term":
		return slog.New(&termHandler{w: w, level: lvl, mu: &sync.Mutex{}}), closeFn, nil
	}
	return nil, nil, fmt.Errorf("log format %q: give logfmt, json or term", format)
}

// termHandler writes a line a person reads: the time, the level, the
// message, then key=value.
type termHandler struct {
	w     io.Writer
	level slog.Level
	attrs []slog.Attr
	mu    *sync.Mutex
}

func (h *termHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *termHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Time.Format(time.TimeOnly))
	b.WriteString(" ")
	b.WriteString(fmt.Sprintf("%-5s", r.Level.String()))
	b.WriteString(" ")
	b.WriteString(r.Message)
	write := func(a slog.Attr) bool {
		v := a.Value.Resolve().String()
		if strings.ContainsAny(v, " \t\"=") {
			v = fmt.Sprintf("%q", v)
		}
		b.WriteString(" " + a.Key + "=" + v)
		return true
	}
	for _, a := range h.attrs {
		write(a)
	}
	r.Attrs(write)
	b.WriteString("\n")
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *termHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
	return &c
}

// WithGroup is not used by the agent: its attributes stay flat.
func (h *termHandler) WithGroup(string) slog.Handler { return h }
