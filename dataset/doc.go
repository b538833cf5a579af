// Package dataset reads and writes whestbench schema-3.0 datasets: the
// directory layout, the parquet files, metadata.json, the README.md card, and
// the merge and combine-splits operations of whestbench's
// https://github.com/AIcrowd/whestbench/blob/main/src/whestbench/dataset_io.py.
//
// Layout:
//
//	<dir>/data/<split>-NNNNN-of-MMMMM.parquet   one row per MLP
//	<dir>/metadata.json                        json.dumps(indent=2) text
//	<dir>/README.md                            HF card: YAML front matter + Markdown
//
// Parquet files carry the 8 columns in whestbench's order, every node
// OPTIONAL with 3-level LIST encoding as Arrow writes them, and the footer
// Arrow writes for them (arrowFooter): the same schema elements, the
// "huggingface" features text HF datasets reads, the ARROW:schema entry
// pyarrow builds column types from (byte-identical to pyarrow's, see
// internal/arrowipc) and content_defined_chunking, and Arrow's column
// statistics. Readers refuse a file whose features text or decoded Arrow
// schema is not exactly that for its shape (checkTypeMetadata). Files are byte-deterministic: equal rows give equal bytes
// (created_by is pinned, nothing time- or host-dependent goes in). Row
// groups are bounded (see rowsPerGroup), scalars are dictionary-encoded
// and SNAPPY, the float arrays uncompressed PLAIN, and every page carries a
// CRC so corruption is caught on read. What still differs from Arrow's
// files is the page layout: data pages v2 with page statistics and CRCs
// (Arrow: v1, none), and page boundaries.
//
// Reading and writing hold one row, whatever its size: float lists move
// between the file and the row's arrays without parquet-go's buffers. A
// row group of one row (a row of 64 MiB or more) goes to the file page by
// page from the row, and uncompressed PLAIN v2 pages, which is what this
// package writes, are read straight into the row (plainListCursor); other
// pages, such as Arrow's dictionary-encoded ones, go through parquet-go.
//
// Metadata is an ordered JSON object (Object) that encodes byte-for-byte
// like Python's json.dumps, so metadata.json files round-trip exactly and
// new ones look like whestbench's. Readers decode it once into Info
// (ParseInfo), which checks each key's type in one place; merge and combine
// compare and copy the Object itself, so keys Info does not know survive.
//
// Differences from whestbench, on purpose:
//   - split names come from metadata and data files are matched by the exact
//     pattern, so hyphenated splits such as my-custom-split survive merge and
//     combine (whestbench cuts the file name at the first '-');
//   - merge also refuses partials with different sampler, algorithm_version,
//     dot_product or seed_file_sha256, and combine ones with a different
//     sampler or algorithm_version: those hold different numbers for the
//     same MLP;
//   - merge groups hardware_fingerprints by device, engine, Go version,
//     whestbake version and CPU brand, and counts MLPs in mlp_count;
//   - the prepared Arrow tree (combine's, prepare-arrow's) holds one
//     record batch a row, so its writer holds one row; its
//     dataset_info.json leaves out what records where the parquet was read
//     (see preparedJSON), so the same rows give the same bytes;
//   - every write refuses an existing output before doing anything and
//     stages in a temporary directory, so a failure leaves nothing behind.
package dataset
