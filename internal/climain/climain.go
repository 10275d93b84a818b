// Package climain runs a command's cobra root as sluice's commands do.
package climain

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// Run executes root with a context that the first SIGINT or SIGTERM
// cancels, for a graceful stop; a second one ends the process at once. An
// error is printed as "name: error" and exits 1.
func Run(name string, root *cobra.Command) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Stop catching signals at the first, so that a second ends the
	// process. The goroutine ends when ctx does: at the first signal, or
	// when Run returns.
	go func() {
		<-ctx.Done()
		stop()
	}()
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		stop()
		os.Exit(1)
	}
}
