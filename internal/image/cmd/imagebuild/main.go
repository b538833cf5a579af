// Command imagebuild is `make image`: whestbake's control image, built
// by internal/image without a container engine, as an OCI image layout.
// It builds the binaries from the working tree and stamps the image with
// HEAD's hash and time, so a commit builds the same digest every time; a
// tree with uncommitted changes is labelled so.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/whestbake/whestbake/internal/image"
	"github.com/whestbake/whestbake/internal/version"
)

func main() {
	out := flag.String("out", "out/image/whestbake-control", "the OCI image layout to write (must not exist)")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "imagebuild:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	rev, err := git("rev-parse", "HEAD")
	if err != nil {
		return err
	}
	if dirty, err := git("status", "--porcelain", "--untracked-files=no"); err != nil {
		return err
	} else if dirty != "" {
		rev += "-dirty"
	}
	secs, err := git("log", "-1", "--format=%ct", "HEAD")
	if err != nil {
		return err
	}
	ct, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		return fmt.Errorf("the commit's time %q: %v", secs, err)
	}
	tmp, err := os.MkdirTemp("", "whestbake-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bins, err := image.Binaries(".", tmp)
	if err != nil {
		return err
	}
	digest, err := image.Build(image.Input{
		Binaries: bins,
		Revision: rev,
		Created:  time.Unix(ct, 0).UTC(),
		Version:  version.Version,
		Dir:      out,
	})
	if err != nil {
		return err
	}
	fmt.Printf("%s: whestbake-control %s at %s, %s\n", out, version.Version, rev, digest)
	fmt.Printf("push it with `skopeo copy oci:%s docker://REGISTRY/whestbake-control:%s`\n",
		out, version.Version)
	return nil
}

func git(args ...string) (string, error) {
	b, err := exec.Command("git", args...).Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(b)), nil
}
