package activities

import (
	"context"
	"os"
	"strings"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/manifest"
)

// checkPrepared checks the prepared Arrow tree of the dataset committed at
// prefix, whose manifest is m, against its parquet files
// (dataset.CheckPrepared), before Push or HubPush publishes anything of
// it: whestbench's loader reads the tree before the parquet files. The
// check reads files, so the dataset is fetched into scratch space first,
// each file checked against m: its metadata.json alone when neither it nor
// m lists a prepared file, else all of it. A tree unlike the parquet files
// is ErrCorruptPartial, which no retry fixes: the same bytes would be read
// again.
func (a *Activities) checkPrepared(ctx context.Context, prefix string, m manifest.Manifest) error {
	defer keepAlive(ctx)()
	dir, err := a.scratch("prepared-check-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var first, rest manifest.Manifest
	tree := false
	for _, f := range m.Files {
		tree = tree || strings.HasPrefix(f.Path, dataset.PreparedDir+"/")
		if f.Path == dataset.MetadataFile {
			first.Files = append(first.Files, f)
		} else {
			rest.Files = append(rest.Files, f)
		}
	}
	if err := fetchFiles(ctx, a.Store, prefix, first, dir, ""); err != nil {
		return err
	}
	if !tree {
		if md, err := dataset.ReadMetadata(dir); err != nil || !md.Has("prepared_splits") {
			return nil // nothing prepared; what else is wrong is not this check's
		}
	}
	if err := fetchFiles(ctx, a.Store, prefix, rest, dir, ""); err != nil {
		return err
	}
	if err := dataset.CheckPrepared(dir); err != nil {
		// The message names the files of the scratch copy: name the
		// committed dataset's instead.
		return fatal(
			bakeapi.ErrCorruptPartial,
			"%s; nothing is published from it: bake again under a new --id, "+
				"or download the dataset, repair it and upload it",
			strings.ReplaceAll(err.Error(), dir, prefix),
		)
	}
	return nil
}
