package natsserver

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/nats-io/nats-server/v2/server"
)

// LevelTrace is the slog level of the server's protocol traces, one below
// slog.LevelDebug. A logger enabled for it receives every protocol message
// the server handles, which is a great many lines.
const LevelTrace = slog.LevelDebug - 4

// serverLog adapts a *slog.Logger to the server.Logger interface. It also
// keeps the server's first fatal error, which the server reports through its
// logger and nowhere else, so that Start can return it.
type serverLog struct {
	logger *slog.Logger // nil discards every line
	fatal  chan string  // capacity 1: the first fatal error
}

var _ server.Logger = (*serverLog)(nil)

func newServerLog(logger *slog.Logger) *serverLog {
	return &serverLog{logger: logger, fatal: make(chan string, 1)}
}

// enabled reports whether lines of the level reach the logger.
func (l *serverLog) enabled(level slog.Level) bool {
	return l.logger != nil && l.logger.Enabled(context.Background(), level)
}

func (l *serverLog) log(level slog.Level, format string, v []any) {
	if !l.enabled(level) {
		return
	}
	l.logger.Log(context.Background(), level, fmt.Sprintf(format, v...))
}

// Noticef logs at Debug: the server's notices (its start-up banner among
// them) are routine for an embedded server.
func (l *serverLog) Noticef(format string, v ...any) { l.log(slog.LevelDebug, format, v) }

// Warnf logs at Warn.
func (l *serverLog) Warnf(format string, v ...any) { l.log(slog.LevelWarn, format, v) }

// Errorf logs at Error.
func (l *serverLog) Errorf(format string, v ...any) { l.log(slog.LevelError, format, v) }

// Debugf logs at Debug.
func (l *serverLog) Debugf(format string, v ...any) { l.log(slog.LevelDebug, format, v) }

// Tracef logs at LevelTrace.
func (l *serverLog) Tracef(format string, v ...any) { l.log(LevelTrace, format, v) }

// Fatalf logs at Error and keeps the first fatal error for Start. Unlike the
// server's own loggers it does not exit the process.
func (l *serverLog) Fatalf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	if l.logger != nil {
		l.logger.Error(msg, "fatal", true)
	}
	select {
	case l.fatal <- msg:
	default:
	}
}
