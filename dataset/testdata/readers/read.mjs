// Reads whestbench parquet files with three readers that share no code with
// whestbake or parquet-go, and prints what each saw as one JSON document:
//   duckdb:    DuckDB's column types and rows (@duckdb/node-api)
//   hyparquet: the rows and the footer's key-value metadata (hyparquet)
//   arrow:     the fields of the ARROW:schema entry decoded by apache-arrow
// Usage: node read.mjs FILE...   (used by dataset's TestIndependentReadersAgree)
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { RecordBatchReader } from 'apache-arrow';

// JSON has no 64-bit integers: int64 values travel as decimal strings.
const plain = (v) =>
  typeof v === 'bigint' ? v.toString()
    : Array.isArray(v) ? v.map(plain)
      : v;

function rowOf(r) {
  const out = {};
  for (const [k, v] of Object.entries(r)) out[k] = plain(v);
  return out;
}

async function duckdb(conn, file) {
  const path = file.replaceAll("'", "''");
  const types = {};
  const desc = await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${path}')`);
  for (const r of desc.getRowObjects()) types[r.column_name] = r.column_type;
  const res = await conn.runAndReadAll(`SELECT * FROM read_parquet('${path}')`);
  // getRowObjectsJS turns lists into arrays and BIGINT into bigint.
  return { types, rows: res.getRowObjectsJS().map(rowOf) };
}

async function hyparquet(file) {
  const buf = readFileSync(file);
  const file_ = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
  const meta = parquetMetadata(file_);
  const kv = (meta.key_value_metadata ?? []).map(({ key, value }) => [key, value]);
  const rows = await parquetReadObjects({ file: file_ });
  return { kv, rows: rows.map(rowOf) };
}

function arrowSchema(kv) {
  const entry = kv.find(([k]) => k === 'ARROW:schema');
  if (!entry) return null;
  const reader = RecordBatchReader.from(Buffer.from(entry[1], 'base64'));
  reader.open();
  const field = (f) => ({
    name: f.name,
    type: String(f.type),
    nullable: f.nullable,
    metadata: Object.fromEntries(f.metadata),
    children: (f.type.children ?? []).map(field),
  });
  return {
    fields: reader.schema.fields.map(field),
    metadata: Object.fromEntries(reader.schema.metadata),
  };
}

const instance = await DuckDBInstance.create(':memory:');
const conn = await instance.connect();
const out = {};
for (const file of process.argv.slice(2)) {
  const h = await hyparquet(file);
  out[file] = { duckdb: await duckdb(conn, file), hyparquet: h, arrow: arrowSchema(h.kv) };
}
process.stdout.write(JSON.stringify(out));
