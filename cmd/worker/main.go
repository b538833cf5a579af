// Command whestbake-worker hosts the Temporal workers of whestbake bakes,
// in control and GPU roles; see package worker.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	// Mozilla's CA roots, for a host with none of its own, such as a
	// distroless or empty image; the system's roots win wherever there are some.
	_ "golang.org/x/crypto/x509roots/fallback"

	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/safetext"
	"github.com/whestbake/whestbake/internal/worker"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := worker.NewCommand(os.Stderr).ExecuteContext(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "whestbake-worker: %s\n",
			strings.Join(safetext.ErrorLines(err), "\n"))
		os.Exit(cmdline.ExitCode(err))
	}
}
