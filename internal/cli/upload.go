package cli

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/internal/bake"
	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/hub"
)

func newUploadCmd() *cobra.Command {
	var o hub.Options
	var endpoint, tokenFile string
	cmd := &cobra.Command{
		Use:   "upload DIR --repo OWNER/NAME",
		Short: "Publish a dataset directory to a Hugging Face Hub dataset repository, in one commit",
		Long: `Pushes every file of DIR to the dataset repository --repo on the Hugging Face
Hub in one commit (as whestbench's upload does): creates the repository if needed
(--private applies then), re-renders README.md with the repository id (the file
in DIR is not changed), sends large and binary files through Git LFS, and tags
the commit with --tag. Pushing files the revision already holds makes no
commit; a push interrupted mid-upload resumes without re-sending the LFS
objects the Hub already has. The token comes from --token-file or HF_TOKEN only.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Repo == "" {
				return cmdline.Usagef("--repo is required: the dataset repository, owner/name")
			}
			if err := hub.CheckRepoID(o.Repo); err != nil {
				return cmdline.Usage(fmt.Errorf("--repo %w", err))
			}
			dir := args[0]
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return fmt.Errorf("%s is not a directory", dir)
			}
			token, err := hub.Token(tokenFile, os.Getenv)
			if err != nil {
				return err
			}
			c, err := hub.New(endpoint, token)
			if err != nil {
				return cmdline.Usage(fmt.Errorf("--endpoint: %w", err))
			}
			files, err := hub.DirFiles(dir)
			if err != nil {
				return err
			}
			if files, err = hub.WithCard(cmd.Context(), files, o.Repo); err != nil {
				return err
			}
			var total int64
			for _, f := range files {
				total += f.Size
			}
			out := cmd.OutOrStdout()
			rev := o.Tag
			if rev == "" {
				rev = o.Revision
			}
			if rev == "" {
				rev = "main"
			}
			plural := "s"
			if len(files) == 1 {
				plural = ""
			}
			fmt.Fprintf(out, "Uploading %s → hf://%s@%s\n", dir, o.Repo, rev)
			fmt.Fprintf(out, "Total: %s (%d file%s) — will create repo if needed.\n", bake.FormatBytes(total), len(files), plural)
			start := time.Now()
			res, err := c.Push(cmd.Context(), o, files)
			if err != nil {
				return err
			}
			if res.NoOp {
				fmt.Fprintf(out, "✓ hf://%s@%s already holds these files: no new commit\n", o.Repo, rev)
			} else {
				fmt.Fprintf(out, "✓ Uploaded hf://%s@%s in %s (%d LFS object(s) sent, %d already on the Hub)\n",
					o.Repo, rev, time.Since(start).Round(time.Millisecond), res.Sent, res.Reused)
				if res.Deleted > 0 {
					fmt.Fprintf(out, "Removed %d file(s) an earlier dataset left in %s\n", res.Deleted, strings.Join(hub.OwnedFolders, " and "))
				}
			}
			fmt.Fprintf(out, "Commit: %s\n", res.Commit)
			fmt.Fprintf(out, "Visible at: %s\n", res.URL)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Repo, "repo", "", "dataset repository on the Hub, owner/name")
	f.StringVar(&o.Revision, "revision", "main", "branch to commit to (must exist)")
	f.StringVar(&o.Tag, "tag", "", "tag the commit (an existing tag must already point at it)")
	f.BoolVar(&o.Private, "private", false, "create the repository private (only when this push creates it)")
	f.StringVar(&o.Message, "message", hub.DefaultMessage, "commit message")
	f.StringVar(&endpoint, "endpoint", hub.DefaultEndpoint, "Hub URL")
	f.StringVar(&tokenFile, "token-file", "", "file holding the Hub token (default: $"+hub.TokenEnv+")")
	return cmd
}
