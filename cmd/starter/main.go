// Command whestbake is the starter CLI: local dataset verbs and benchmarks.
package main

import (
	"os"

	"github.com/whestbake/whestbake/internal/cli"
)

func main() {
	os.Exit(cli.Execute(os.Args[1:], os.Stdout, os.Stderr))
}
