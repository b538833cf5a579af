package metadata

const (
	// SchemaVersion is the only schema whestbench 0.16 loads.
	SchemaVersion = "3.0"
	// Format names the on-disk layout in metadata.
	Format = "hf-datasets-parquet"
	// DefaultSplit is the split a single-split dataset without a "split" key has.
	DefaultSplit = "public"
	// DefaultConfig is the HF config name that needs no configs block.
	DefaultConfig = "default"
)

// Seed protocols, the constants of
// https://github.com/AIcrowd/whestbench/blob/main/src/whestbench/dataset_io.py.
// whestbake bakes 3.0 and 4.0; 2.0 datasets are only read.
const (
	SeedProtocolV2Name    = "whestbench_seedsequence_hierarchy"
	SeedProtocolV2Version = "2.0"
	SeedProtocolV3Name    = "whestbench_explicit_per_mlp_seeds"
	SeedProtocolV3Version = "3.0"
	SeedProtocolV4Name    = "whestbench_kdf_per_mlp_seeds"
	SeedProtocolV4Version = "4.0"
)

// Protocol 4.0's salt declaration in the seed_protocol block of whestbench's
// https://github.com/AIcrowd/whestbench/blob/main/src/whestbench/seeds.py: the
// salt is either in the block, with salt_source "metadata", the default, or
// withheld, and then read from the SaltEnv environment variable and checked
// against salt_digest.
const (
	KDFBlake2bKeyed    = "blake2b-keyed"
	SaltSourceMetadata = "metadata"
	SaltSourceEnv      = "env"
	// SaltEnv is the environment variable whestbench reads a withheld salt
	// from, as hex.
	SaltEnv = "WHEST_SEED_SALT"
)
