// Command whestbake-worker will host the Temporal workers (control and GPU roles).
// Until the workflow DAG lands it only says so.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "whestbake-worker: the Temporal workers are not built yet; use `whestbake dataset bake` for local bakes")
	os.Exit(2)
}
