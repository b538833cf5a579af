// Package parquetio reads and writes the parquet files of a whestbench
// schema-3.0 dataset, one row, a schema.Row, per MLP.
//
// Files carry the 8 columns in whestbench's order, every node OPTIONAL with
// 3-level LIST encoding as Arrow writes them, and the footer Arrow writes
// for them, as arrowFooter makes it: the same schema elements, the
// "huggingface" features text HF datasets reads, the ARROW:schema entry
// pyarrow builds column types from, byte-identical to pyarrow's as
// schema.ArrowSchema says, and content_defined_chunking, and Arrow's column
// statistics. Readers refuse a file whose features text or decoded Arrow
// schema is not exactly that for its shape, by schema.CheckTypeMetadata.
// Files are byte-deterministic: equal rows give equal bytes, since
// created_by is pinned and nothing time- or host-dependent goes in. Row
// groups are bounded by rowsPerGroup, scalars are dictionary-encoded and
// SNAPPY, the float arrays uncompressed PLAIN, and every page carries a CRC
// so corruption is caught on read. What differs from Arrow's files is the
// page layout: data pages v2 with page statistics and CRCs, where Arrow
// writes v1 without either, and page boundaries.
//
// Reading and writing hold one row, whatever its size: float lists move
// between the file and the row's arrays without parquet-go's buffers. A row
// group of one row, a row of 64 MiB or more, goes to the file page by page
// from the row, and uncompressed PLAIN v2 pages, which is what this package
// writes, are read straight into the row by plainListCursor; other pages,
// such as Arrow's dictionary-encoded ones, go through parquet-go. Every
// size a file states is checked against the file before parquet-go is
// trusted with it, in guard.go. Any problem with a file is a
// *schema.InvalidDatasetError naming it.
package parquetio
