// Read shardbench parquet files with hyparquet (npm): schema, row groups and
// every row; the data column's values must be the bytes of each row group's
// data page. usage: node parquet_check.mjs HYPARQUET_DIR ROWS FILE...
import { readFileSync } from 'fs'
import { pathToFileURL } from 'url'

const [dir, rowsArg, ...files] = process.argv.slice(2)
const { parquetMetadata, parquetReadObjects } = await import(pathToFileURL(dir + '/node_modules/hyparquet/src/index.js'))
const rows = Number(rowsArg)
let bad = 0
const check = (what, ok) => { if (!ok) { bad++; console.log('bad: ' + what) } }
for (const f of files) {
  const b = readFileSync(f)
  const ab = b.buffer.slice(b.byteOffset, b.byteOffset + b.length)
  const md = parquetMetadata(ab)
  const rec = md.schema[2].type_length
  check(f + ' schema', md.schema.map(s => s.name).join(',') === 'schema,label,data'
        && md.schema[1].type === 'INT64' && md.schema[2].type === 'FIXED_LEN_BYTE_ARRAY')
  check(f + ' rows', Number(md.num_rows) === rows)
  const per = Math.max(1, Math.floor(1048576 / rec))
  check(f + ' row groups', md.row_groups.length === Math.ceil(rows / Math.min(per, rows)))
  const out = await parquetReadObjects({ file: ab })
  check(f + ' rows read', out.length === rows)
  let row = 0
  for (const g of md.row_groups) {
    const n = Number(g.num_rows)
    const c = g.columns[1].meta_data
    const end = Number(c.data_page_offset) + Number(c.total_compressed_size)
    const values = b.subarray(end - n * rec, end)
    for (let j = 0; j < n; j++, row++) {
      check(f + ' label ' + row, Number(out[row].label) === row)
      check(f + ' data ' + row, Buffer.compare(Buffer.from(out[row].data), values.subarray(j * rec, (j + 1) * rec)) === 0)
    }
  }
}
console.log(files.length + ' files, bad ' + bad)
process.exit(bad ? 1 : 0)
