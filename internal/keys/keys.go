// Package keys is the one place that names objects: every object key of a
// bake and of a release; workflow IDs are bakeapi's. Everything a bake
// writes lives at a key that depends only on the bake ID, split and indices,
// so a retried or duplicated activity writes to the same place.
package keys

import (
	"fmt"
	"path"
	"strings"
)

// Bake is the object-key root of one bake.
type Bake string

// workArea is the folder of every bake's objects, in any bucket.
const workArea = "bakes"

func (b Bake) root() string { return workArea + "/" + string(b) }

// InWorkArea reports whether folder, a key prefix without a trailing "/",
// lies in the bakes' working area, or holds it. No release may: its Push
// would write into a bake's folder another bake's dataset, which that bake
// would then publish as its own, and gc of that bake would delete it.
// Releases are kept out of it in every bucket, since a release bucket may be
// some other deployment's artifact bucket.
func InWorkArea(folder string) bool {
	return folder == "" || folder == workArea || strings.HasPrefix(folder, workArea+"/")
}

// split is a split's own folder; under "splits/" so no split name can collide
// with the bake's other folders.
func (b Bake) split(name string) string { return path.Join(b.root(), "splits", name) }

// Record is the bake's record, a bakeapi.Record: what defines its bits,
// written create-only at its first start.
func (b Bake) Record() string { return path.Join(b.root(), "record.json") }

// StartedIn records where the bake runs: the Temporal cluster and namespace
// of its first start. gc deletes only after that server says the bake is
// closed.
func (b Bake) StartedIn() string { return path.Join(b.root(), "started-in.json") }

// InputSeeds is where the starter uploads a user's seeds file for a split.
func (b Bake) InputSeeds(split string) string {
	return path.Join(b.root(), "inputs", split+"-seeds.json")
}

// Seeds is the canonical seeds file of a split, written once by GenerateSeeds.
func (b Bake) Seeds(split string) string { return path.Join(b.split(split), "seeds.json") }

// IdentityBlock is block k of a split's identities: the seed and name of
// MLPs [k·B, (k+1)·B), B being mlps.IdentityBlockSize, written by
// GenerateSeeds so a slice reads only the MLPs it bakes.
func (b Bake) IdentityBlock(split string, block int) string {
	return path.Join(b.identities(split), fmt.Sprintf("block-%06d.json", block))
}

// SaltedIdentityBlock is block k of a protocol-4.0 split's identities, named
// under saltSHA256, the hex SHA-256 of the salt: a GPU worker, which holds
// the salt, writes them. They sit with IdentityBlock, so SliceState covers
// them.
func (b Bake) SaltedIdentityBlock(split, saltSHA256 string, block int) string {
	return path.Join(
		b.identities(split),
		"salt-"+saltSHA256[:min(16, len(saltSHA256))],
		fmt.Sprintf("block-%06d.json", block),
	)
}

// IdentitiesDone marks a split's identity blocks complete; written after the last one.
func (b Bake) IdentitiesDone(split string) string {
	return path.Join(b.identities(split), identitiesDoneFile)
}

const identitiesDoneFile = "done.json"

func (b Bake) identities(split string) string { return path.Join(b.split(split), "identities") }

// MLPResult holds one finished MLP's statistics, written create-only.
func (b Bake) MLPResult(split string, mlp int) string {
	return path.Join(b.split(split), "mlps", fmt.Sprintf("mlp-%06d.json", mlp))
}

// MLPCheckpoint holds an unfinished MLP's engine checkpoint, overwritten as it advances.
func (b Bake) MLPCheckpoint(split string, mlp int) string {
	return path.Join(b.split(split), "checkpoints", fmt.Sprintf("mlp-%06d.json", mlp))
}

// Slice is the prefix of a slice's partial dataset directory.
func (b Bake) Slice(split string, slice int) string {
	return path.Join(b.split(split), "slices", fmt.Sprintf("%05d", slice))
}

// SliceState lists the folders, key prefixes ending in "/", that only the
// split's slices use: identity blocks, per-MLP results and checkpoints. Once
// every slice is committed they are garbage.
func (b Bake) SliceState(split string) []string {
	d := b.split(split)
	return []string{
		b.identities(split) + "/",
		path.Join(d, "mlps") + "/",
		path.Join(d, "checkpoints") + "/",
	}
}

// Slices is the folder, a key prefix ending in "/", of a split's slice partials.
func (b Bake) Slices(split string) string { return path.Join(b.split(split), "slices") + "/" }

// Merged is the prefix of a split's merged dataset directory.
func (b Bake) Merged(split string) string { return path.Join(b.split(split), "merged") }

// MergedSplit is the split whose merged directory, as Merged names it, is
// at prefix, or false when prefix is no merged directory of b.
func (b Bake) MergedSplit(prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(prefix, b.root()+"/splits/")
	if !ok {
		return "", false
	}
	split, ok := strings.CutSuffix(rest, "/merged")
	return split, ok && split != "" && b.Merged(split) == prefix
}

// Dataset is the prefix of the bake's final, combined dataset directory.
func (b Bake) Dataset() string { return path.Join(b.root(), "dataset") }

// PreparedCheck is CombineSplits' word that it checked the prepared Arrow
// tree of the dataset whose manifest.json has the hex sha256 manifestSHA256
// against its parquet files before committing it: one object per commit,
// written create-only, which Push and HubPush read instead of checking the
// tree again.
func (b Bake) PreparedCheck(manifestSHA256 string) string {
	return path.Join(b.root(), "checks", "prepared-"+manifestSHA256+".json")
}

// Prefix is the folder, a key prefix ending in "/", of everything the bake stores.
func (b Bake) Prefix() string { return b.root() + "/" }

// Intermediate reports whether key is one of bake b's intermediates: an
// object only the bake's own later steps read, such as identity blocks,
// per-MLP results, checkpoints, slice partials and merged splits, as
// opposed to its record, its seeds files and its final dataset.
func (b Bake) Intermediate(key string) bool {
	rest, ok := strings.CutPrefix(key, b.root()+"/splits/")
	if !ok {
		return false
	}
	split, sub, ok := strings.Cut(rest, "/")
	return ok && key != b.Seeds(split) && sub != ""
}

// Manifest is the file list with sha256s of a dataset directory prefix; it is
// the directory's commit marker, written last.
func Manifest(prefix string) string { return path.Join(prefix, manifestFile) }

const manifestFile = "manifest.json"

// Marker reports whether key is a commit marker of a bake: a directory's
// Manifest or a split's IdentitiesDone, each written after what it
// vouches for. gc deletes them before anything else, so that a deletion
// cut short leaves no commit whose parts are gone, only uncommitted objects,
// which a restart of the bake writes again.
func Marker(key string) bool {
	base := path.Base(key)
	return base == manifestFile || base == identitiesDoneFile
}

// Release is the prefix of a published release inside the destination bucket.
func Release(prefix, name, tag string) string { return path.Join(prefix, name, tag) }

// ReleaseURI is the s3:// address of release name/tag under prefix in bucket.
func ReleaseURI(bucket, prefix, name, tag string) string {
	return "s3://" + path.Join(bucket, Release(prefix, name, tag)) + "/"
}
