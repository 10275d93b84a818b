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
	go func() {
		<-ctx.Done()
		stop()
	}()
	if err := newBenchCommand().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "sluice-bench:", err)
		stop()
		os.Exit(1)
	}
}
