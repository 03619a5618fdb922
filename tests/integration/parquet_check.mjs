// Read shardbench parquet files with hyparquet (npm): schema, row groups and
// every row. usage: node parquet_check.mjs HYPARQUET_DIR ROWS GROUP_ROWS COLUMNS FILE...
// The schema must be the one pyarrow writes for DLIO's table
// (parquet_generator.py): nullable (OPTIONAL) columns, a column of size > 1
// a LIST group (optional group NAME (LIST) { repeated group list { optional
// T element } }). COLUMNS "-": DLIO's legacy mode, the one column data, a
// list of uint8 (groups of 1 MiB of data when GROUP_ROWS is 0); its values
// must be the bytes that end each row group's data page (dictionary indices
// 8 bits wide, the identity dictionary). Else "name:dtype:size,...":
// exactly those columns, with their physical and logical types, GROUP_ROWS
// rows a group. Prints
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
const types = { // dtype: [physical, item bytes, logical, converted], as pyarrow maps arrow's types
  float16: ['FIXED_LEN_BYTE_ARRAY', 2, 'FLOAT16', undefined], float32: ['FLOAT', 4], float64: ['DOUBLE', 8],
  int64: ['INT64', 8], int32: ['INT32', 4], int16: ['INT32', 2, 'INTEGER', 'INT_16'],
  int8: ['INT32', 1, 'INTEGER', 'INT_8'], uint64: ['INT64', 8, 'INTEGER', 'UINT_64'],
  uint32: ['INT32', 4, 'INTEGER', 'UINT_32'], uint16: ['INT32', 2, 'INTEGER', 'UINT_16'],
  uint8: ['INT32', 1, 'INTEGER', 'UINT_8'], list: ['FLOAT', 4],
}
// schema elements from i: a leaf of dtype (name, OPTIONAL, types), or for a
// list the LIST group, its repeated group list and the element leaf. The
// index after them.
const leafOk = (s, name, dtype) => {
  const t = types[dtype]
  return s.name === name && s.type === t[0] && s.repetition_type === 'OPTIONAL' && !s.num_children
    && (t[0] !== 'FIXED_LEN_BYTE_ARRAY' || s.type_length === t[1])
    && s.logical_type?.type === t[2] && s.converted_type === t[3]
    && (t[2] !== 'INTEGER' || (s.logical_type.bitWidth === t[1] * 8 && s.logical_type.isSigned === !dtype.startsWith('u')))
}
const columnOk = (schema, i, name, dtype, list) => {
  if (!list) return [leafOk(schema[i], name, dtype), i + 1]
  const g = schema[i], r = schema[i + 1]
  const ok = g && r && g.name === name && g.repetition_type === 'OPTIONAL' && g.num_children === 1 && !g.type
    && g.converted_type === 'LIST' && g.logical_type?.type === 'LIST'
    && r.name === 'list' && r.repetition_type === 'REPEATED' && r.num_children === 1 && !r.type
    && leafOk(schema[i + 2] || {}, 'element', dtype)
  return [ok, i + 3]
}
const cols = colsArg === '-' ? null : colsArg.split(',').map(c => { const [name, dtype, size] = c.split(':'); return { name, dtype, size: Number(size) } })
for (const f of files) {
  const b = readFileSync(f)
  const ab = b.buffer.slice(b.byteOffset, b.byteOffset + b.length)
  const md = parquetMetadata(ab)
  check(f + ' rows', Number(md.num_rows) === rows)
  let per, rowWidth
  if (!cols) {
    const out0 = await parquetReadObjects({ file: ab, rowStart: 0, rowEnd: 1, compressors })
    const rec = out0[0].data.length
    rowWidth = rec
    check(f + ' schema', md.schema.length === 4 && md.schema[0].num_children === 1 && columnOk(md.schema, 1, 'data', 'uint8', true)[0])
    per = Math.min(rows, groupRows || Math.max(1, Math.floor(1048576 / rec)))
  } else {
    per = Math.min(rows, groupRows)
    check(f + ' schema root', md.schema[0].num_children === cols.length)
    let i = 1
    for (const c of cols) {
      const [ok, next] = columnOk(md.schema, i, c.name, c.dtype, c.size > 1 || c.dtype === 'list')
      check(f + ' ' + c.name + ' schema ' + JSON.stringify(md.schema.slice(i, next)), ok)
      i = next
    }
    check(f + ' schema elements', i === md.schema.length)
    rowWidth = cols.reduce((s, c) => s + c.size * types[c.dtype][1], 0)
  }
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
    // the data page's indices (8 bits, the identity dictionary) are the
    // row's bytes; they end the page but for the padding to 8 values
    const rec = rowWidth
    let row = 0
    for (const g of md.row_groups) {
      const n = Number(g.num_rows)
      const c = g.columns[0].meta_data
      check(f + ' data chunk: a dictionary page, then the data page', Number(c.dictionary_page_offset) > 0
            && Number(c.dictionary_page_offset) < Number(c.data_page_offset) && c.encodings.includes('RLE_DICTIONARY'))
      const pad = Math.ceil(n * rec / 8) * 8 - n * rec
      const end = Number(c.dictionary_page_offset) + Number(c.total_compressed_size) - pad
      const values = b.subarray(end - n * rec, end)
      for (let j = 0; j < n; j++, row++)
        check(f + ' data ' + row, out[row].data.length === rec
              && Buffer.compare(Buffer.from(out[row].data), values.subarray(j * rec, (j + 1) * rec)) === 0)
    }
  } else if (cols) {
    for (let row = 0; row < out.length; row++) {
      check(f + ' row ' + row + ' columns', Object.keys(out[row]).join(',') === cols.map(c => c.name).join(','))
      for (const c of cols) {
        const v = out[row][c.name]
        const scalar = x => c.dtype === 'int8' ? Number.isInteger(x) && x >= -128 && x <= 127
          : c.dtype === 'uint8' ? Number.isInteger(x) && x >= 0 && x <= 255
          : c.dtype.startsWith('float') || c.dtype === 'list' ? typeof x === 'number'
          : typeof x === 'bigint' || Number.isInteger(x)
        if (c.size > 1 || c.dtype === 'list') check(f + ' ' + c.name + ' ' + row, Array.isArray(v) && v.length === c.size && v.every(scalar))
        else check(f + ' ' + c.name + ' ' + row, scalar(v))
      }
    }
  }
}
console.log('group-bytes ' + groupBytes)
console.log('data-bytes ' + dataBytes)
console.log(files.length + ' files, bad ' + bad)
process.exit(bad ? 1 : 0)
