package dataset

import (
	"github.com/whestbake/whestbake/dataset/internal/metadata"
	"github.com/whestbake/whestbake/dataset/internal/pyjson"
)

// Object is a JSON object that keeps its keys in insertion order, the way a
// Python dict does, and encodes byte for byte like Python's json.dumps; it
// is pyjson.Object. whestbench writes metadata.json with
// json.dumps(indent=2) and never sorts keys, so key order is part of the
// format.
type Object = pyjson.Object

// NewObject returns an empty object.
func NewObject() *Object { return pyjson.NewObject() }

// Info is the typed view of a dataset's metadata: the values whestbake
// interprets, decoded and checked once by ParseInfo; it is metadata.Info. The
// Metadata it came from stays the record of the dataset: merge and combine
// copy from it, so keys Info does not know, and the exact JSON of those it
// does, reach their output unchanged.
type Info = metadata.Info

// SeedProtocol names how the mlp_seed values were derived, and for 4.0 the
// salt declaration Validate has checked.
type SeedProtocol = metadata.SeedProtocol

// SplitInfo is one split as the metadata describes it: its entry under
// "splits", or the top level of a single-split dataset.
type SplitInfo = metadata.SplitInfo

// Provenance records what computed a split's rows.
type Provenance = metadata.Provenance

// The constants of whestbench's format, as package metadata defines them.
const (
	// SchemaVersion is the only schema whestbench 0.16 loads.
	SchemaVersion = metadata.SchemaVersion
	// Format names the on-disk layout in metadata.
	Format = metadata.Format
	// DefaultSplit is the split a single-split dataset without a "split" key has.
	DefaultSplit = metadata.DefaultSplit
	// DefaultConfig is the HF config name that needs no configs block.
	DefaultConfig = metadata.DefaultConfig
)

// Seed protocols: whestbake bakes 3.0 and 4.0; 2.0 datasets are only read.
const (
	SeedProtocolV2Name    = metadata.SeedProtocolV2Name
	SeedProtocolV2Version = metadata.SeedProtocolV2Version
	SeedProtocolV3Name    = metadata.SeedProtocolV3Name
	SeedProtocolV3Version = metadata.SeedProtocolV3Version
	SeedProtocolV4Name    = metadata.SeedProtocolV4Name
	SeedProtocolV4Version = metadata.SeedProtocolV4Version
)

// Protocol 4.0's salt declaration: the salt is in the seed_protocol block,
// with salt_source "metadata", the default, or withheld, and then read from the
// SaltEnv environment variable and checked against salt_digest.
const (
	KDFBlake2bKeyed    = metadata.KDFBlake2bKeyed
	SaltSourceMetadata = metadata.SaltSourceMetadata
	SaltSourceEnv      = metadata.SaltSourceEnv
	// SaltEnv is the environment variable whestbench reads a withheld salt
	// from, as hex.
	SaltEnv = metadata.SaltEnv
)

// ParseInfo validates md with Validate, which refuses a partial unless
// allowPartial, and decodes the values whestbake interprets with
// metadata.Decode. A key of the wrong type is an *InvalidDatasetError
// naming it. A null string or host record counts as absent, since
// whestbench writes None for what it does not know; a null number is an
// error, as no count or size can be unknown.
func ParseInfo(md Metadata, allowPartial bool) (*Info, error) {
	if err := Validate(md, allowPartial); err != nil {
		return nil, err
	}
	return metadata.Decode(md)
}
