// Command sluice is the event pipeline: `sluice serve` runs it, the other
// commands talk to a running sluice or inspect the event catalogue.
//
// Every flag can also be set in the environment as SLUICE_<FLAG>, with
// dashes as underscores: --data-dir is SLUICE_DATA_DIR. A flag on the
// command line wins over the environment.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal starts a graceful shutdown. Stop catching signals
	// then, so that a second SIGINT or SIGTERM ends the process at once.
	// The goroutine ends when ctx does: at the first signal, or when main
	// returns.
	go func() {
		<-ctx.Done()
		stop()
	}()
	if err := newRootCommand().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "sluice:", err)
		stop()
		os.Exit(1)
	}
}
