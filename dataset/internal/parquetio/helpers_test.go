package parquetio

// fixtures are whestbench's own datasets, written by pyarrow
// (https://github.com/AIcrowd/whestbench/blob/main/tests/fixtures).
const fixtures = "../../../testdata/whestbench-fixtures"

// singleSplitShard is the one parquet file of whestbench's single-split
// fixture.
const singleSplitShard = fixtures + "/single_split_v3_protocol/data/public-00000-of-00001.parquet"
