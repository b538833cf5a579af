package parquetio

// fixtures are whestbench's own datasets, written by pyarrow
// (https://github.com/AIcrowd/whestbench/blob/main/tests/fixtures).
const fixtures = "../../../testdata/whestbench-fixtures"
