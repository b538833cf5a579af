package dataset

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/whestbake/whestbake/dataset/internal/pyjson"
	"github.com/whestbake/whestbake/internal/readlimit"
)

// Metadata is a dataset's metadata.json document. It is an alias, not a new
// type: every *Object method, such as GetString, GetInt, GetObject and
// Truthy, applies, and key order is kept as written.
type Metadata = *Object

// Backend is the metadata "backend" value of everything whestbake bakes.
const Backend = "whestbake"

// MetadataFile is the metadata's file in a dataset directory.
const MetadataFile = "metadata.json"

// BakeInfo is what one bake knows about itself; NewBakeMetadata turns it into
// the metadata document of the dataset or partial it writes.
type BakeInfo struct {
	CreatedAt time.Time
	Split     string // "" means DefaultSplit
	Config    string // "" means DefaultConfig
	TotalMLPs int    // MLPs in the whole logical bake
	// Range is the half-open [start, end) of MLP indices this file holds. The
	// zero value means all of them; anything else is a partial.
	Range            [2]int
	NSamples         int64
	Width, Depth     int
	Hardware         Hardware
	WhestbakeVersion string
	Sampler          string // "numpy" or "philox"
	Engine           string
	AlgorithmVersion string
	DotProduct       string // "fma" or "muladd"; set by numpy bakes only, omitted when empty
	Device           string
	Driver           string // GPU driver; omitted when empty
	ChunkSize        int
	// SeedFileSHA256 is the hex SHA-256 of the seeds file bytes, or of the
	// canonical JSON of generated seeds.
	SeedFileSHA256 string
	// Salt makes the bake a protocol-4.0 one; nil is protocol 3.0.
	Salt *SaltRecord
}

// SaltRecord is what a protocol-4.0 dataset records about its salt.
type SaltRecord struct {
	Digest string // lowercase hex SHA-256 of the salt bytes
	ID     string // optional name of the salt for its holders
	// Hex is the salt itself, published in the metadata; "" withholds it
	// with salt_source "env", and readers need it in SaltEnv.
	Hex string
}

// seedProtocolBlock is whestbench's build_seed_protocol_metadata in
// https://github.com/AIcrowd/whestbench/blob/main/src/whestbench/seeds.py:
// name and version, and for 4.0 the KDF and the salt declaration, with the salt
// itself last and only when it is published.
func seedProtocolBlock(salt *SaltRecord) *Object {
	if salt == nil {
		return NewObject().Set("name", SeedProtocolV3Name).Set("version", SeedProtocolV3Version)
	}
	source := SaltSourceMetadata
	if salt.Hex == "" {
		source = SaltSourceEnv
	}
	o := NewObject().Set("name", SeedProtocolV4Name).Set("version", SeedProtocolV4Version).
		Set("kdf", KDFBlake2bKeyed).Set("salt_source", source).Set("salt_digest", salt.Digest)
	if salt.ID != "" {
		o.Set("salt_id", salt.ID)
	}
	if salt.Hex != "" {
		o.Set("salt", salt.Hex)
	}
	return o
}

// NewBakeMetadata builds a single-bake metadata document: whestbench's key
// order, from create_dataset in
// https://github.com/AIcrowd/whestbench/blob/main/src/whestbench/dataset.py,
// with backend "whestbake", the hardware block, whestbake_version, our
// provenance keys, and the partial keys when Range is not the whole bake.
func NewBakeMetadata(b BakeInfo) Metadata {
	start, end := b.Range[0], b.Range[1]
	if start == 0 && end == 0 {
		end = b.TotalMLPs
	}
	split, config := b.Split, b.Config
	if split == "" {
		split = DefaultSplit
	}
	if config == "" {
		config = DefaultConfig
	}
	md := NewObject().
		Set("schema_version", SchemaVersion).
		Set("format", Format).
		Set("backend", Backend).
		Set("seed_protocol", seedProtocolBlock(b.Salt)).
		Set("created_at_utc", isoUTC(b.CreatedAt)).
		Set("split", split).
		Set("config", config).
		Set("n_mlps", end-start).
		Set("n_samples", b.NSamples).
		Set("width", b.Width).
		Set("depth", b.Depth).
		Set("hardware", b.Hardware.Object()).
		Set("whestbake_version", b.WhestbakeVersion).
		Set("sampler", b.Sampler).
		Set("engine", b.Engine).
		Set("algorithm_version", b.AlgorithmVersion)
	if b.DotProduct != "" {
		md.Set("dot_product", b.DotProduct)
	}
	md.Set("device", b.Device)
	if b.Driver != "" {
		md.Set("driver", b.Driver)
	}
	md.Set("chunk_size", b.ChunkSize).
		Set("seed_file_sha256", b.SeedFileSHA256)
	if start != 0 || end != b.TotalMLPs {
		md.Set("is_partial", true).
			Set("mlp_range", []int{start, end}).
			Set("total_n_mlps", b.TotalMLPs)
	}
	return md
}

// isoUTC formats t like Python's datetime.now(timezone.utc).isoformat():
// microseconds, omitted when zero, and a +00:00 offset.
func isoUTC(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02T15:04:05") + "+00:00"
	}
	return t.Format("2006-01-02T15:04:05.000000") + "+00:00"
}

// MaxMetadataBytes bounds a metadata.json that is read. whestbake's are a few
// KiB: whestbench's keys, one block per split and hardware fingerprints grouped
// by device, a handful even for a fleet. 4 MiB is a thousand times that, and
// its tokens are counted against it before ParseMetadata parses it, so a
// hostile file costs a reader a few times the limit in memory.
const MaxMetadataBytes = 4 << 20

// ReadMetadata reads and parses <dir>/metadata.json without validating it.
func ReadMetadata(dir string) (Metadata, error) {
	path := filepath.Join(dir, MetadataFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, invalidf("missing metadata.json at %s. "+
			"This may be a legacy .npz dataset (re-bake it with `whestbake dataset bake`) "+
			"or not a dataset directory.", path)
	}
	if err != nil {
		return nil, invalidf("cannot read %s: %v", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxMetadataBytes+1))
	if err != nil {
		return nil, invalidf("cannot read %s: %v", path, err)
	}
	if len(data) > MaxMetadataBytes {
		return nil, invalidf("%s is over %d bytes (dataset.MaxMetadataBytes), "+
			"far more than any dataset's metadata: it is damaged or not a dataset's",
			path, MaxMetadataBytes)
	}
	return ParseMetadata(data, path)
}

// ParseMetadata decodes metadata.json's content, read from where, which
// errors name, without validating it: a document of more JSON tokens than one of
// MaxMetadataBytes could honestly hold is refused before it is decoded.
func ParseMetadata(data []byte, where string) (Metadata, error) {
	if err := readlimit.JSONTokens(data, MaxMetadataBytes); err != nil {
		return nil, invalidf("metadata.json at %s: %v: it is damaged or not a dataset's",
			where, err)
	}
	v, err := pyjson.Loads(data)
	if err != nil {
		return nil, invalidf("metadata.json at %s is not valid JSON: %v", where, err)
	}
	md, ok := v.(*Object)
	if !ok {
		return nil, invalidf("metadata.json at %s must hold a JSON object; got %s",
			where, pyjson.Kind(v))
	}
	return md, nil
}

// encodeMetadata is the metadata.json file content.
func encodeMetadata(md Metadata) ([]byte, error) {
	b, err := md.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("dataset: encoding metadata.json: %w", err)
	}
	return b, nil
}
