package activities

import (
	"context"
	"errors"
	"os"
	"strings"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/manifest"
	"github.com/whestbake/whestbake/internal/seal"
	"github.com/whestbake/whestbake/internal/store"
)

// preparedCheck is CombineSplits' word, at keys.PreparedCheck, that it
// checked the prepared tree of a dataset against its parquet files
// (dataset.CheckPrepared, by the rule of preparedCheckRule) before it
// committed the manifest of sha256 ManifestSHA256, so that Push and
// HubPush, which prove every byte they publish equal to that manifest,
// need not fetch the whole dataset to check the tree once more.
type preparedCheck struct {
	ManifestSHA256 string    `json:"manifest_sha256"`
	Rule           string    `json:"rule"`
	Seal           seal.Seal `json:"seal"`
}

// preparedCheckRule names what dataset.CheckPrepared checks. Change it
// whenever that check changes, so that datasets checked under the older
// rule are checked again before they are published. v1 compared the files
// with prepare-arrow's bytes; v2 reads any save_to_disk folder as
// load_from_disk does and compares its rows with the parquet's.
const preparedCheckRule = "prepared/v2: paths, save_to_disk files as load_from_disk reads them, " +
	"rows = parquet bit for bit"

// maxPreparedCheckBytes bounds the read of a preparedCheck (about 400 bytes).
const maxPreparedCheckBytes = 64 << 10

// vouchPrepared records that the dataset whose manifest has sha256 sum,
// committed by bake bakeID, had its prepared tree checked.
func (a *Activities) vouchPrepared(ctx context.Context, bakeID, sum string) error {
	key := keys.Bake(bakeID).PreparedCheck(sum)
	c := preparedCheck{ManifestSHA256: sum, Rule: preparedCheckRule}
	data, err := seal.Marshal(&c, &c.Seal, seal.Seal{Key: key, Bake: bakeID})
	if err != nil {
		return err
	}
	if err := a.Store.PutCreate(ctx, key, data); err != nil && !isExists(err) {
		return storeErr(err)
	}
	return nil
}

// preparedVouched reports whether the bake that committed the dataset at
// prefix, whose manifest m has sha256 sum, vouched for its prepared tree
// under the current rule (vouchPrepared). Anything else is no, and the tree
// is checked: a dataset committed by hand, a word that is missing, damaged
// or for another rule.
func (a *Activities) preparedVouched(
	ctx context.Context,
	prefix string,
	m manifest.Manifest,
	sum string,
) (bool, error) {
	bakeID := m.Seal.Bake
	if bakeID == "" || prefix != keys.Bake(bakeID).Dataset() {
		return false, nil
	}
	key := keys.Bake(bakeID).PreparedCheck(sum)
	data, err := a.Store.GetMax(ctx, key, maxPreparedCheckBytes)
	switch {
	case errors.Is(err, store.ErrNotFound) || damaged(err) || errors.Is(err, store.ErrTooLarge):
		return false, nil
	case err != nil:
		return false, storeErr(err)
	}
	var c preparedCheck
	if err := seal.Unmarshal(key, data, &c, &c.Seal, seal.Seal{Key: key, Bake: bakeID}); err != nil {
		return false, nil
	}
	return c.ManifestSHA256 == sum && c.Rule == preparedCheckRule, nil
}

// vouchedOrCheck checks the prepared tree of the dataset at prefix
// (checkPrepared) unless its bake vouched for it (preparedVouched).
func (a *Activities) vouchedOrCheck(
	ctx context.Context,
	prefix string,
	m manifest.Manifest,
	sum string,
) error {
	if ok, err := a.preparedVouched(ctx, prefix, m, sum); ok || err != nil {
		return err
	}
	return a.checkPrepared(ctx, prefix, m)
}

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
