// Read shardbench parquet files with hyparquet (npm): schema, row groups and
// every row. usage: node parquet_check.mjs HYPARQUET_DIR ROWS GROUP_ROWS COLUMNS FILE...
// COLUMNS "-": the label + data columns (groups of 1 MiB of data when
// GROUP_ROWS is 0); the data column's values must be the bytes of each row
// group's data page. Else "name:dtype:size,...": exactly those columns, with
// their physical and logical types, GROUP_ROWS rows a group. Prints
// "epoch-bytes N": the sum over rows of the bytes of the row group holding
// the row (what a training epoch reads, a row group per sample).
// Compressed files (environment): PQ_CODEC (SNAPPY, GZIP, ZSTD) the codec
// every column chunk must name; hyparquet decodes the pages (snappy its
// own, gzip and zstd with hyparquet-compressors from the same folder) and
// PQ_SAME_AS, an uncompressed file of the same seed, must give the same
// rows. PQ_SPANS: print "span FILE GROUP OFFSET LENGTH", the read DLIO's
// file reader makes of each row group (from the first to the end of the
// last column chunk of the columns in PQ_READ, "a,b" or all).
import { readFileSync } from 'fs'
import { pathToFileURL } from 'url'

const [dir, rowsArg, groupArg, colsArg, ...files] = process.argv.slice(2)
const { parquetMetadata, parquetReadObjects } = await import(pathToFileURL(dir + '/node_modules/hyparquet/src/index.js'))
const rows = Number(rowsArg), groupRows = Number(groupArg)
const codec = process.env.PQ_CODEC || 'UNCOMPRESSED'
let compressors
if (codec === 'GZIP' || codec === 'ZSTD')
  ({ compressors } = await import(pathToFileURL(dir + '/node_modules/hyparquet-compressors/src/index.js')))
const readCols = process.env.PQ_READ ? process.env.PQ_READ.split(',') : null
// rows as text (bigints and byte arrays included), to compare two files
const rowsText = out => JSON.stringify(out, (k, v) => typeof v === 'bigint' ? v.toString() + 'n'
  : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v)
let sameAs = null
if (process.env.PQ_SAME_AS) {
  const b = readFileSync(process.env.PQ_SAME_AS)
  sameAs = rowsText(await parquetReadObjects({ file: b.buffer.slice(b.byteOffset, b.byteOffset + b.length) }))
}
let bad = 0, groupBytes = 0, dataBytes = 0
const check = (what, ok) => { if (!ok) { bad++; console.log('bad: ' + what) } }
const types = { // dtype: [physical, item bytes, logical, converted] for size 1
  float16: ['FIXED_LEN_BYTE_ARRAY', 2, 'FLOAT16', undefined], float32: ['FLOAT', 4], float64: ['DOUBLE', 8],
  int64: ['INT64', 8], int32: ['INT32', 4], int16: ['INT32', 2, 'INTEGER', 'INT_16'],
  int8: ['INT32', 1, 'INTEGER', 'INT_8'], uint16: ['INT32', 2, 'INTEGER', 'UINT_16'], uint8: ['INT32', 1, 'INTEGER', 'UINT_8'],
}
const cols = colsArg === '-' ? null : colsArg.split(',').map(c => { const [name, dtype, size] = c.split(':'); return { name, dtype, size: Number(size) } })
for (const f of files) {
  const b = readFileSync(f)
  const ab = b.buffer.slice(b.byteOffset, b.byteOffset + b.length)
  const md = parquetMetadata(ab)
  check(f + ' rows', Number(md.num_rows) === rows)
  let per
  if (!cols) {
    const rec = md.schema[2].type_length
    check(f + ' schema', md.schema.map(s => s.name).join(',') === 'schema,label,data'
          && md.schema[1].type === 'INT64' && md.schema[2].type === 'FIXED_LEN_BYTE_ARRAY')
    per = Math.min(rows, groupRows || Math.max(1, Math.floor(1048576 / rec)))
  } else {
    per = Math.min(rows, groupRows)
    check(f + ' schema names', md.schema.map(s => s.name).join(',') === ['schema', ...cols.map(c => c.name)].join(','))
    cols.forEach((c, i) => {
      const s = md.schema[i + 1], t = types[c.dtype]
      if (c.size > 1)
        check(f + ' ' + c.name + ' type', s.type === 'FIXED_LEN_BYTE_ARRAY' && s.type_length === c.size * t[1] && !s.logical_type)
      else
        check(f + ' ' + c.name + ' type ' + JSON.stringify(s), s.type === t[0] && s.repetition_type === 'REQUIRED'
              && (t[0] !== 'FIXED_LEN_BYTE_ARRAY' || s.type_length === t[1])
              && s.logical_type?.type === t[2] && s.converted_type === t[3]
              && (t[2] !== 'INTEGER' || (s.logical_type.bitWidth === t[1] * 8 && s.logical_type.isSigned === !c.dtype.startsWith('u'))))
    })
  }
  const widths = { INT64: 8, DOUBLE: 8, INT32: 4, FLOAT: 4 }
  const rowWidth = md.schema.slice(1).reduce((s, c) => s + (c.type === 'FIXED_LEN_BYTE_ARRAY' ? c.type_length : widths[c.type]), 0)
  check(f + ' row width', Number.isInteger(rowWidth) && rowWidth > 0)
  check(f + ' row groups', md.row_groups.length === Math.ceil(rows / per))
  md.row_groups.forEach((g, i) => {
    check(f + ' rows of group ' + i, Number(g.num_rows) === (i < md.row_groups.length - 1 ? per : rows - i * per))
    const chunks = g.columns.reduce((s, c) => s + Number(c.meta_data.total_compressed_size), 0)
    const plain = g.columns.reduce((s, c) => s + Number(c.meta_data.total_uncompressed_size), 0)
    const prev = i ? md.row_groups[i - 1].columns.reduce((s, c) => s + Number(c.meta_data.total_compressed_size), 0) : 0
    check(f + ' group ' + i + ' bytes', plain === Number(g.total_byte_size)
          && Number(g.columns[0].file_offset) === (i ? Number(md.row_groups[i - 1].columns[0].file_offset) + prev : 4))
    g.columns.forEach(c => check(f + ' group ' + i + ' ' + c.meta_data.path_in_schema[0] + ' codec ' + c.meta_data.codec,
                                 c.meta_data.codec === codec))
    if (codec !== 'UNCOMPRESSED')
      check(f + ' group ' + i + ' compressed', chunks !== plain)
    groupBytes += chunks
    dataBytes += Number(g.num_rows) * rowWidth
    if (process.env.PQ_SPANS) {
      let lo = Infinity, hi = 0
      for (const c of g.columns) {
        if (readCols && !readCols.includes(c.meta_data.path_in_schema[0])) continue
        const m = c.meta_data, s = Number(m.dictionary_page_offset || 0) > 0 ? Number(m.dictionary_page_offset) : Number(m.data_page_offset)
        lo = Math.min(lo, s); hi = Math.max(hi, s + Number(m.total_compressed_size))
      }
      console.log('span ' + f + ' ' + i + ' ' + lo + ' ' + (hi - lo))
    }
  })
  const out = await parquetReadObjects({ file: ab, compressors })
  check(f + ' rows read', out.length === rows)
  if (sameAs !== null)
    check(f + ' rows equal the uncompressed file\'s', rowsText(out) === sameAs)
  if (!cols && codec === 'UNCOMPRESSED') {
    const rec = md.schema[2].type_length
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
  } else if (cols) {
    for (let row = 0; row < out.length; row++) {
      check(f + ' row ' + row + ' columns', Object.keys(out[row]).join(',') === cols.map(c => c.name).join(','))
      for (const c of cols) {
        const v = out[row][c.name]
        if (c.size > 1) check(f + ' ' + c.name + ' ' + row, v.length === c.size * types[c.dtype][1])
        else if (c.dtype === 'int8') check(f + ' ' + c.name + ' ' + row, Number.isInteger(v) && v >= -128 && v <= 127)
        else if (c.dtype.startsWith('float')) check(f + ' ' + c.name + ' ' + row, typeof v === 'number')
        else check(f + ' ' + c.name + ' ' + row, typeof v === 'bigint' || Number.isInteger(v))
      }
    }
  }
}
console.log('group-bytes ' + groupBytes)
console.log('data-bytes ' + dataBytes)
console.log(files.length + ' files, bad ' + bad)
process.exit(bad ? 1 : 0)
