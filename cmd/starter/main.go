// Command whestbake is the starter CLI: local dataset verbs and benchmarks.
package main

import (
	"os"

	// Mozilla's CA roots, for a host with none of its own, such as a
	// distroless or empty image; the system's roots win wherever there are some.
	_ "golang.org/x/crypto/x509roots/fallback"

	"github.com/whestbake/whestbake/internal/cli"
)

func main() {
	os.Exit(cli.Execute(os.Args[1:], os.Stdout, os.Stderr))
}
