// Package dataset reads and writes whestbench schema-3.0 datasets: the
// directory layout, metadata.json, and the merge and combine-splits
// operations of whestbench's
// https://github.com/AIcrowd/whestbench/blob/main/src/whestbench/dataset_io.py.
//
// Layout:
//
//	<dir>/data/<split>-NNNNN-of-MMMMM.parquet   one row per MLP
//	<dir>/metadata.json                        json.dumps(indent=2) text
//	<dir>/README.md                            HF card: YAML front matter + Markdown
//	<dir>/prepared/<split>/                    save_to_disk tree, multi-split only
//	<dir>/report/                              `whestbake dataset report`'s page and figures
//
// Each format lives in a package of its own under dataset/internal, and this
// package puts them together into a dataset directory:
//   - parquetio: the parquet files, one row held at a time whatever its size;
//   - pyjson: JSON byte-for-byte as Python's json module writes it;
//   - metadata: the typed view of metadata.json;
//   - card: README.md;
//   - prepared: the prepared Arrow tree;
//   - breakdown: the sampling_budget_breakdown column;
//   - schema: the one table of the columns, the row and the checks they all
//     share.
//
// Their types appear here under their dataset names, such as Row, Object,
// Info and ParquetReader, so importers need no other package.
//
// Metadata is an ordered JSON object, Object, that encodes byte-for-byte
// like Python's json.dumps, so metadata.json files round-trip exactly and
// new ones look like whestbench's. Readers decode it once into Info with
// ParseInfo, which checks each key's type in one place; merge and combine
// compare and copy the Object itself, so keys Info does not know survive.
//
// Differences from whestbench, on purpose:
//   - split names come from metadata and data files are matched by the exact
//     pattern, so hyphenated splits such as my-custom-split survive merge and
//     combine, where whestbench cuts the file name at the first '-';
//   - merge also refuses partials with different sampler, algorithm_version,
//     dot_product or seed_file_sha256, and combine ones with a different
//     sampler or algorithm_version: those hold different numbers for the
//     same MLP;
//   - merge groups hardware_fingerprints by device, engine, Go version,
//     whestbake version and CPU brand as well as whestbench's fields,
//     which are the GPU, torch, Python, numpy, whestbench and flopscope
//     versions and bake_config, and counts MLPs in mlp_count;
//   - the prepared Arrow tree that combine and prepare-arrow write holds
//     one record batch a row, so its writer holds one row; its
//     dataset_info.json leaves out what records where the parquet was read,
//     as prepared.InfoJSON says, so the same rows give the same bytes;
//   - a split larger than a shard may be, 500 MB as datasets' own
//     MAX_SHARD_SIZE, is written in several shards, parquet and prepared
//     Arrow alike, the rows of each a function of the split's shape and
//     row count alone, as internal/shards cuts them; whestbench writes one file a
//     split whatever its size, and its merge and combine-splits take
//     inputs of one parquet file only, though its loader reads every
//     shard;
//   - every write refuses an existing output before doing anything and
//     stages in a temporary directory, so a failure leaves nothing behind.
package dataset
