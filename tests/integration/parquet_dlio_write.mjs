// Write parquet files as DLIO_local_changes' parquet_generator.py writes
// them, with hyparquet-writer (npm, pinned) standing in for pyarrow (Debian
// has no python3-pyarrow): the schema pyarrow gives DLIO's table (nullable
// columns: OPTIONAL; a column of size > 1, and the legacy data column,
// pa.list_(type, size): optional group NAME (LIST) { repeated group list {
// optional T element } }), uncompressed (DLIO's COMPRESSION_MAP), row
// groups of GROUP_ROWS rows (write_table(row_group_size)).
// usage: node parquet_dlio_write.mjs WRITER_DIR FOLDER FILES ROWS GROUP_ROWS COLUMNS
// COLUMNS "-": the legacy data column, a list of RECORD uint8 (env
// PQ_RECORD); else "name:dtype:size,...". Files FOLDER/train/img_I_of_FILES.parquet.
import { mkdirSync, writeFileSync } from 'fs'
import { pathToFileURL } from 'url'

const [dir, folder, filesArg, rowsArg, groupArg, colsArg] = process.argv.slice(2)
const { parquetWriteBuffer } = await import(pathToFileURL(dir + '/node_modules/hyparquet-writer/src/index.js'))
const files = Number(filesArg), rows = Number(rowsArg), groupRows = Number(groupArg)
const types = { // dtype: parquet leaf as pyarrow writes it, a value from a random 32-bit number
  float16: [{ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 2, logical_type: { type: 'FLOAT16' } }, r => (r % 2000) / 100 - 10],
  float32: [{ type: 'FLOAT' }, r => r / 4294967296],
  float64: [{ type: 'DOUBLE' }, r => r / 4294967296 - 0.5],
  int64: [{ type: 'INT64' }, r => BigInt(r) - 2147483648n],
  int32: [{ type: 'INT32' }, r => (r | 0)],
  int8: [{ type: 'INT32', converted_type: 'INT_8', logical_type: { type: 'INTEGER', bitWidth: 8, isSigned: true } }, r => (r & 255) - 128],
  uint8: [{ type: 'INT32', converted_type: 'UINT_8', logical_type: { type: 'INTEGER', bitWidth: 8, isSigned: false } }, r => r & 255],
}
const cols = colsArg === '-' ? [{ name: 'data', dtype: 'uint8', size: Number(process.env.PQ_RECORD), list: true }]
  : colsArg.split(',').map(c => { const [name, dtype, size] = c.split(':'); return { name, dtype, size: Number(size), list: Number(size) > 1 } })
const schema = [{ name: 'schema', num_children: cols.length }]
for (const c of cols) {
  const leaf = types[c.dtype][0]
  if (!c.list) { schema.push({ name: c.name, repetition_type: 'OPTIONAL', ...leaf }); continue }
  schema.push({ name: c.name, repetition_type: 'OPTIONAL', num_children: 1, converted_type: 'LIST', logical_type: { type: 'LIST' } })
  schema.push({ name: 'list', repetition_type: 'REPEATED', num_children: 1 })
  schema.push({ name: 'element', repetition_type: 'OPTIONAL', ...leaf })
}
let seed = 12345
const rand = () => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return seed }
mkdirSync(folder + '/train', { recursive: true })
for (let i = 0; i < files; i++) {
  const columnData = cols.map(c => {
    const value = types[c.dtype][1]
    const data = []
    for (let j = 0; j < rows; j++) {
      if (!c.list) { data.push(value(rand())); continue }
      const v = []
      for (let e = 0; e < c.size; e++) v.push(value(rand()))
      data.push(v)
    }
    return { name: c.name, data }
  })
  const buf = parquetWriteBuffer({ columnData, schema, codec: 'UNCOMPRESSED', rowGroupSize: groupRows, createdBy: 'parquet_dlio_write' })
  writeFileSync(`${folder}/train/img_${i}_of_${files}.parquet`, new Uint8Array(buf))
}
console.log('written ' + files)
