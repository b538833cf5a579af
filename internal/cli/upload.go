package cli

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/internal/bytesize"
	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/hub"
	"github.com/whestbake/whestbake/internal/safetext"
)

func newUploadCmd() *cobra.Command {
	var f uploadFlags
	cmd := &cobra.Command{
		Use: "upload DIR --repo OWNER/NAME",
		Short: "Publish a dataset directory to a Hugging Face Hub dataset repository, " +
			"in one commit",
		Long: `Validates the dataset DIR as inspect does (every row, the parquet footers'
features and Arrow schema) and pushes its own files to the dataset repository
--repo on the Hugging Face Hub in one commit (as whestbench's upload does):
metadata.json, README.md, data/, report/ and prepared/; anything else in DIR
(a token file, hidden files, staging folders, notes) is left out and listed.
Creates the repository if needed (--private applies then), re-renders README.md
with the repository id (the file in DIR is not changed), sends large and binary
files through Git LFS, and tags the commit with --tag. Pushing files the
revision already holds makes no commit; a push interrupted mid-upload resumes
without re-sending the LFS objects the Hub already has. A revision that holds
another dataset (another metadata.json, or data files this one lacks) is
replaced only with --replace. The token comes from --token-file or HF_TOKEN
only, and goes over https (plain http only to this machine's loopback).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runUpload(cmd, args[0], f) },
	}
	f.register(cmd)
	return cmd
}

// uploadFlags are upload's flags: the push's options, and the Hub to push to
// with its token.
type uploadFlags struct {
	opts                hub.Options
	endpoint, tokenFile string
}

func (f *uploadFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.opts.Repo, "repo", "", "dataset repository on the Hub, owner/name")
	fl.StringVar(&f.opts.Revision, "revision", "main", "branch to commit to (must exist)")
	fl.StringVar(&f.opts.Tag, "tag", "",
		"tag the commit (an existing tag must already point at it)")
	fl.BoolVar(&f.opts.Replace, "replace", false, "replace another dataset the revision holds "+
		"(another metadata.json, or data files this one lacks)")
	fl.BoolVar(&f.opts.Private, "private", false,
		"create the repository private (only when this push creates it)")
	fl.StringVar(&f.opts.Message, "message", hub.DefaultMessage, "commit message")
	fl.StringVar(&f.endpoint, "endpoint", hub.DefaultEndpoint,
		"Hub URL (https; plain http only to localhost, 127.0.0.0/8 or ::1)")
	fl.StringVar(&f.tokenFile, "token-file", "",
		"file holding the Hub token (default: $"+hub.TokenEnv+")")
	fromKey(fl, map[string]string{
		"repo":       "release.hub.repo",
		"revision":   "release.hub.revision",
		"tag":        "release.hub.tag",
		"replace":    "release.hub.replace",
		"private":    "release.hub.private",
		"message":    "release.hub.message",
		"endpoint":   "release.hub.endpoint",
		"token-file": "release.hub.token-file",
	})
}

// check refuses, as bad input, a missing or malformed --repo and an --endpoint
// the token must not travel to.
func (f uploadFlags) check() error {
	if f.opts.Repo == "" {
		return cmdline.Usagef("--repo is required: the dataset repository, owner/name")
	}
	if err := hub.CheckRepoID(f.opts.Repo); err != nil {
		return cmdline.Usage(fmt.Errorf("--repo %w", err))
	}
	if err := hub.CheckEndpoint(f.endpoint); err != nil {
		return cmdline.Usage(fmt.Errorf("--endpoint: %w", err))
	}
	return nil
}

func runUpload(cmd *cobra.Command, dir string, f uploadFlags) error {
	if err := f.check(); err != nil {
		return err
	}
	files, left, err := hub.DatasetFiles(cmd.Context(), dir, f.opts.Repo)
	if err != nil {
		return err
	}
	token, err := hub.Token(f.tokenFile, os.Getenv)
	if err != nil {
		return err
	}
	c, err := hub.New(f.endpoint, token)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	rev := cmp.Or(f.opts.Tag, f.opts.Revision, "main")
	printUploadPlan(out, dir, f.opts.Repo, rev, files, left)
	start := time.Now()
	res, err := c.Push(cmd.Context(), f.opts, files)
	if err != nil {
		return err
	}
	printUploadResult(out, f.opts.Repo, rev, res, time.Since(start))
	return nil
}

// printUploadPlan says, before the push, where DIR goes, what of it is left
// out, and how much it sends.
func printUploadPlan(out io.Writer, dir, repo, rev string, files []hub.File, left []string) {
	var total int64
	for _, f := range files {
		total += f.Size
	}
	plural := "s"
	if len(files) == 1 {
		plural = ""
	}
	fmt.Fprintf(out, "Uploading %s → hf://%s@%s\n", dir, repo, rev)
	if len(left) > 0 {
		fmt.Fprintf(out, "Left out %d file(s) that are not part of the dataset: %s\n",
			len(left), safetext.Line(shortList(left, maxListed)))
	}
	fmt.Fprintf(out, "Total: %s (%d file%s) — will create repo if needed.\n",
		bytesize.Format(total), len(files), plural)
}

// printUploadResult says what the push did: no commit, or the commit and
// what it sent, replaced and removed.
func printUploadResult(out io.Writer, repo, rev string, res hub.Result, took time.Duration) {
	if res.NoOp {
		fmt.Fprintf(out, "✓ hf://%s@%s already holds these files: no new commit\n", repo, rev)
	} else {
		fmt.Fprintf(out, "✓ Uploaded hf://%s@%s in %s "+
			"(%d LFS object(s) sent, %d already on the Hub)\n",
			repo, rev, took.Round(time.Millisecond), res.Sent, res.Reused)
		if res.Replaced {
			fmt.Fprintf(out, "Replaced the other dataset hf://%s@%s held (--replace)\n", repo, rev)
		}
		if res.Deleted > 0 {
			fmt.Fprintf(out, "Removed %d file(s) an earlier dataset left in %s\n",
				res.Deleted, strings.Join(hub.OwnedFolders, " and "))
		}
	}
	fmt.Fprintf(out, "Commit: %s\n", safetext.Line(res.Commit))
	fmt.Fprintf(out, "Visible at: %s\n", safetext.Line(res.URL))
}

// maxListed bounds the files a message names: a staging folder left in a
// dataset directory may hold thousands.
const maxListed = 10

// shortList joins the first n of names, saying how many more there are.
func shortList(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}
