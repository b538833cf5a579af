// Reads Arrow IPC stream files (the data-*.arrow of a datasets save_to_disk
// folder) with apache-arrow, which shares no code with whestbake, and prints
// for each its schema (fields, types, metadata), its record batch count and
// its rows as one JSON document.
// Usage: node stream.mjs FILE...   (used by dataset's TestPreparedArrowIndependentReader)
import { readFileSync } from 'node:fs';
import { RecordBatchReader } from 'apache-arrow';

// JSON has no 64-bit integers: int64 values travel as decimal strings, and
// floats as their exact decimal text so that nothing is lost on the way.
const plain = (v) =>
  typeof v === 'bigint' ? v.toString()
    : v !== null && typeof v === 'object' && typeof v.toArray === 'function' ? Array.from(v.toArray(), plain)
      : v !== null && typeof v === 'object' && ArrayBuffer.isView(v) ? Array.from(v, plain)
        : v;

const field = (f) => ({
  name: f.name,
  type: String(f.type),
  nullable: f.nullable,
  metadata: Object.fromEntries(f.metadata),
  children: (f.type.children ?? []).map(field),
});

const out = {};
for (const file of process.argv.slice(2)) {
  const reader = RecordBatchReader.from(readFileSync(file));
  reader.open();
  if (!reader.isStream()) throw new Error(`${file} is not an IPC stream`);
  const schema = { fields: reader.schema.fields.map(field), metadata: Object.fromEntries(reader.schema.metadata) };
  const rows = [];
  let batches = 0;
  for (const batch of reader) {
    batches++;
    for (let i = 0; i < batch.numRows; i++) {
      const r = {};
      for (const f of batch.schema.fields) {
        const col = batch.getChild(f.name);
        if (col.nullCount !== 0) throw new Error(`${file}: ${f.name} has nulls`);
        r[f.name] = plain(col.get(i));
      }
      rows.push(r);
    }
  }
  out[file] = { schema, batches, rows };
}
process.stdout.write(JSON.stringify(out));
