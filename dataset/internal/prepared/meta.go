package prepared

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/whestbake/whestbake/dataset/internal/pyjson"
	"github.com/whestbake/whestbake/dataset/internal/schema"
	"github.com/whestbake/whestbake/internal/readlimit"
)

// ShardName is the name save_to_disk gives shard i of n, which
// datasets/arrow_dataset.py Dataset.save_to_disk spells
// f"data-{shard_idx:05d}-of-{num_shards:05d}.arrow".
func ShardName(i, n int) string { return fmt.Sprintf("data-%05d-of-%05d.arrow", i, n) }

// IsShardName reports whether name is ShardName(i, n) for some i < n.
func IsShardName(name string) bool {
	rest, ok := strings.CutPrefix(name, "data-")
	rest, ok2 := strings.CutSuffix(rest, ".arrow")
	is, ns, ok3 := strings.Cut(rest, "-of-")
	if !ok || !ok2 || !ok3 {
		return false
	}
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	return err1 == nil && err2 == nil && i >= 0 && i < n && name == ShardName(i, n)
}

// maxJSONBytes caps the read of a split's state.json and of its
// dataset_info.json. save_to_disk's state.json takes about 50 bytes a
// shard, so the cap lists 20,000 shards of up to 500 MB each; whestbench's
// dataset_info.json is under 2 KiB.
const maxJSONBytes = 1 << 20

// openPlain opens the plain file at path and returns its size, refusing
// anything else: a symlink is refused before it is followed. Its errors
// say what is wrong with the file.
func openPlain(path string) (*os.File, int64, error) {
	before, err := os.Lstat(path)
	if err != nil {
		return nil, 0, fmt.Errorf("cannot be read (%v)", errors.Unwrap(err))
	}
	if !before.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("is not a plain file but a %s", before.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("cannot be read (%v)", errors.Unwrap(err))
	}
	after, err := f.Stat()
	if err != nil || !os.SameFile(before, after) {
		f.Close()
		return nil, 0, errors.New("changed while it was opened")
	}
	return f, after.Size(), nil
}

// readJSON reads file of the split's folder, of at most maxJSONBytes, as
// json.load reads it from a file opened as UTF-8, into an object.
func (c *SplitCheck) readJSON(file string) (*pyjson.Object, error) {
	f, _, err := openPlain(c.path(file))
	if err != nil {
		return nil, c.repairf(file, "%v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxJSONBytes+1))
	switch {
	case err != nil:
		return nil, c.repairf(file, "cannot be read (%v)", err)
	case len(data) > maxJSONBytes:
		return nil, c.repairf(file, "is larger than %d KiB, the most save_to_disk writes "+
			"(and the most this check reads) of it", maxJSONBytes>>10)
	case !utf8.Valid(data):
		return nil, c.repairf(file, "is not UTF-8, which load_from_disk reads it as")
	}
	if err := readlimit.JSONTokens(data, maxJSONBytes); err != nil {
		return nil, c.repairf(file, "%v", err)
	}
	v, err := pyjson.Loads(data)
	if err != nil {
		return nil, c.repairf(file, "is not JSON (%v)", err)
	}
	o, ok := v.(*pyjson.Object)
	if !ok {
		return nil, c.repairf(file, "is a JSON %s, not an object", pyjson.Kind(v))
	}
	return o, nil
}

// unformatted is state.json's format of a dataset with no format set, in
// which load_from_disk returns every column as plain Python values, as
// Dataset.with_format with these is Dataset.reset_format. A type or its
// keyword arguments would change what it returns, a list of columns hide
// the others.
var unformatted = []struct {
	key  string
	want any
}{
	{"_format_columns", nil},
	{"_format_kwargs", pyjson.NewObject()},
	{"_format_type", nil},
	{"_output_all_columns", false},
}

// checkState checks state.json as load_from_disk reads it, and returns the
// shards it lists: each named as save_to_disk names shard i of n, so that
// none lies outside the folder and their order is the rows'; the split's
// name; no format; a fingerprint that datasets' validate_fingerprint
// accepts. Keys load_from_disk does not read are let be.
func (c *SplitCheck) checkState() ([]string, error) {
	st, err := c.readJSON(StateFile)
	if err != nil {
		return nil, err
	}
	files, ok := st.GetArray("_data_files")
	if !ok || len(files) == 0 {
		return nil, c.repairf(StateFile, "has no _data_files list of shards")
	}
	shards := make([]string, len(files))
	for i, e := range files {
		entry, _ := e.(*pyjson.Object)
		name, ok := entry.GetString("filename")
		if want := ShardName(i, len(files)); !ok || name != want {
			return nil, c.repairf(StateFile, "lists %s as shard %d of %d, where save_to_disk "+
				"writes {\"filename\": %q}: the check reads no other file",
				pyjson.Compact(e), i, len(files), want)
		}
		shards[i] = name
	}
	if v, _ := st.Get("_split"); !pyjson.Equal(v, c.split.Name) {
		return nil, c.repairf(StateFile, "has _split %s, not %q: it is another split's",
			pyjson.Compact(v), c.split.Name)
	}
	for _, f := range unformatted {
		if v, ok := st.Get(f.key); !ok || !pyjson.Equal(v, f.want) {
			return nil, c.repairf(StateFile, "has %s %s where a dataset with no format has %s: "+
				"load_from_disk would not return every column as plain values",
				f.key, compactOrMissing(v, ok), pyjson.Compact(f.want))
		}
	}
	fp, _ := st.Get("_fingerprint")
	if err := validateFingerprint(fp); err != nil {
		return nil, c.repairf(StateFile, "has _fingerprint %s: %v", pyjson.Compact(fp), err)
	}
	return shards, nil
}

func compactOrMissing(v any, ok bool) string {
	if !ok {
		return "missing"
	}
	return pyjson.Compact(v)
}

// validateFingerprint is datasets/fingerprint.py validate_fingerprint: a
// non-empty string of at most 64 characters, none of them one that could
// not name a cache file.
func validateFingerprint(v any) error {
	s, ok := v.(string)
	switch {
	case !ok || s == "":
		return errors.New("a fingerprint is a non-empty string")
	case strings.ContainsAny(s, `<>:/\|?*`):
		return errors.New(`a fingerprint has none of the characters <>:/\|?*`)
	case utf8.RuneCountInString(s) > 64:
		return errors.New("a fingerprint has at most 64 characters")
	}
	return nil
}

// checkInfo checks dataset_info.json as load_from_disk reads it with
// datasets/info.py DatasetInfo.from_dict: its features are the split's,
// and the fields DatasetInfo converts convert; keys it does not know it
// drops, and so does the check.
func (c *SplitCheck) checkInfo() error {
	info, err := c.readJSON(InfoFile)
	if err != nil {
		return err
	}
	if err := checkInfoFields(info); err != nil {
		return c.repairf(InfoFile, "%v, which DatasetInfo.from_dict refuses", err)
	}
	v, _ := info.Get("features")
	if diff := featuresDiff(v, c.split.Width, c.split.Depth); diff != "" {
		return c.repairf(InfoFile, "its features are not those of split %q "+
			"(width %d, depth %d): %s", c.split.Name, c.split.Width, c.split.Depth, diff)
	}
	return nil
}

// versionText is datasets/utils/version.py's _VERSION_REG as re.match
// applies it: x.y.z, where $ also matches before a final newline.
var versionText = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+\n?$`)

// splitInfoKeys are datasets/splits.py SplitInfo's fields, the keys a
// split of DatasetInfo's splits may have.
var splitInfoKeys = []string{
	"name", "num_bytes", "num_examples", "shard_lengths", "original_shard_lengths", "dataset_name",
}

// checkInfoFields checks the fields DatasetInfo.__post_init__ converts,
// other than the features: version to a Version, splits by
// SplitDict.from_split_dict, supervised_keys to a SupervisedKeysData and
// post_processed to a PostProcessedInfo, whose features the check would
// not know.
func checkInfoFields(info *pyjson.Object) error {
	switch v, _ := info.Get("version"); v := v.(type) {
	case nil:
	case string:
		if !versionText.MatchString(v) {
			return fmt.Errorf("its version %q is not x.y.z", v)
		}
	case *pyjson.Object:
		if s, _ := v.GetString("version_str"); !versionText.MatchString(s) {
			return fmt.Errorf("its version %s has no version_str x.y.z", pyjson.Compact(v))
		}
	default:
		return fmt.Errorf("its version is a %s", pyjson.Kind(v))
	}
	if err := checkSplits(info); err != nil {
		return err
	}
	switch v, _ := info.Get("supervised_keys"); v := v.(type) {
	case nil:
	case []any:
		if len(v) > 2 {
			return fmt.Errorf("its supervised_keys has %d entries, not input and output", len(v))
		}
	case *pyjson.Object:
		for _, k := range v.Keys() {
			if k != "input" && k != "output" {
				return fmt.Errorf("its supervised_keys has a key %q", k)
			}
		}
	default:
		return fmt.Errorf("its supervised_keys is a %s", pyjson.Kind(v))
	}
	if v, _ := info.Get("post_processed"); v != nil {
		p, ok := v.(*pyjson.Object)
		if f, _ := p.Get("features"); !ok || f != nil {
			return fmt.Errorf("its post_processed is %s, not null or without features",
				pyjson.Compact(v))
		}
	}
	return nil
}

// checkSplits checks DatasetInfo's splits: null, or an object or a list of
// SplitInfo objects of distinct names, as SplitDict.add refuses a name twice.
func checkSplits(info *pyjson.Object) error {
	var splits []any
	switch v, _ := info.Get("splits"); v := v.(type) {
	case nil:
		return nil
	case []any:
		splits = v
	case *pyjson.Object:
		for _, k := range v.Keys() {
			s, _ := v.Get(k)
			splits = append(splits, s)
		}
	default:
		return fmt.Errorf("its splits is a %s", pyjson.Kind(v))
	}
	names := map[string]bool{}
	for _, s := range splits {
		o, ok := s.(*pyjson.Object)
		if !ok {
			return fmt.Errorf("its splits hold a %s, not a SplitInfo object", pyjson.Kind(s))
		}
		for _, k := range o.Keys() {
			if !slices.Contains(splitInfoKeys, k) {
				return fmt.Errorf("a split of its splits has a key %q", k)
			}
		}
		name, ok := o.Get("name")
		if !ok {
			name = "" // SplitInfo's default
		}
		key := pyjson.Compact(name)
		switch name.(type) {
		case []any, *pyjson.Object:
			return fmt.Errorf("its splits have a name %s, which is no dict key", key)
		}
		if names[key] {
			return fmt.Errorf("its splits name %s twice", key)
		}
		names[key] = true
	}
	return nil
}

// featuresDiff says how the features v, decoded from dataset_info.json or
// from an Arrow schema's huggingface metadata, differ from those of width
// w and depth d as Features.from_dict reads both, or is "". The order of
// the columns is not compared: Dataset.__init__ reorders the features as
// the Arrow file's columns with Features.reorder_fields_as.
func featuresDiff(v any, w, d int) string {
	got, ok := v.(*pyjson.Object)
	if !ok {
		return fmt.Sprintf("they are %s, not an object of features", pyjson.Compact(v))
	}
	want := schema.Features(w, d)
	for _, name := range got.Keys() {
		if !want.Has(name) {
			return fmt.Sprintf("they have a column %q, which the parquet files do not", name)
		}
	}
	for _, name := range want.Keys() {
		g, ok := got.Get(name)
		if !ok {
			return fmt.Sprintf("they have no column %q", name)
		}
		x, _ := want.Get(name)
		gt, err := featureText(g)
		if err != nil {
			return fmt.Sprintf("feature %s %v", name, err)
		}
		if xt, _ := featureText(x); gt != xt {
			return fmt.Sprintf("feature %s is %s, expected %s", name, gt, xt)
		}
	}
	return ""
}

// valueAliases are the dtypes Value.__post_init__ renames.
var valueAliases = map[string]string{"double": "float64", "float": "float32"}

// featureText is the feature v as datasets/features/features.py
// generate_from_dict builds it, in datasets' repr: Value, Array2D, Array3D,
// List and Sequence, a List, as their fields say, keys a feature does not
// have dropped as it drops them. Any other feature is named by its _type:
// whestbench's columns have none. A feature generate_from_dict refuses is
// an error.
func featureText(v any) (string, error) {
	o, ok := v.(*pyjson.Object)
	if !ok {
		return "", fmt.Errorf("is a JSON %s, not a feature", pyjson.Kind(v))
	}
	typ, ok := o.GetString("_type")
	if !ok {
		return "", errors.New("has no _type: it is a struct of features")
	}
	switch typ {
	case "Value":
		dtype, ok := o.GetString("dtype")
		if !ok {
			return "", errors.New("has no dtype")
		}
		if alias, ok := valueAliases[dtype]; ok {
			dtype = alias
		}
		return fmt.Sprintf("Value(%q)", dtype), nil
	case "Array2D", "Array3D":
		shape, ok := o.GetArray("shape")
		dtype, ok2 := o.GetString("dtype")
		if !ok || !ok2 {
			return "", fmt.Errorf("is an %s without a shape and a dtype", typ)
		}
		dims := make([]string, len(shape))
		for i, x := range shape {
			n, ok := pyjson.AsInt(x)
			if !ok {
				return "", fmt.Errorf("has a shape %s that is no list of integers",
					pyjson.Compact(shape))
			}
			dims[i] = strconv.FormatInt(n, 10)
		}
		return fmt.Sprintf("%s(shape=(%s), dtype=%q)", typ, strings.Join(dims, ", "), dtype), nil
	case "List", "Sequence":
		return listText(o)
	}
	return typ, nil
}

// listText is a List, or a Sequence of a feature that is no struct, which
// Sequence makes a List: List(feature, length=-1, id=None) takes those
// keyword arguments alone.
func listText(o *pyjson.Object) (string, error) {
	for _, k := range o.Keys() {
		if k != "feature" && k != "length" && k != "id" && k != "_type" {
			return "", fmt.Errorf("has a key %q, which List refuses", k)
		}
	}
	f, ok := o.Get("feature")
	if !ok {
		return "", errors.New("is a list without a feature")
	}
	item, err := featureText(f)
	if err != nil {
		return "", fmt.Errorf("has an item that %v", err)
	}
	length := int64(-1)
	if v, ok := o.Get("length"); ok {
		if length, ok = pyjson.AsInt(v); !ok {
			return "", fmt.Errorf("has a length %s, not an integer", pyjson.Compact(v))
		}
	}
	return fmt.Sprintf("List(%s, length=%d)", item, length), nil
}
