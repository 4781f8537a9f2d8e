// Reads Parquet files with DuckDB (@duckdb/node-api), the notebook's
// stand-in, and prints what a notebook would see as one JSON object:
//
//   node duckdb.mjs FILE.parquet...
//   {"FILE.parquet": {"rows": N, "columns": [{"name", "type"}], "kv": {key: value},
//                     "compression": ["ZSTD"], "nulls": {col: n}, "nans": {col: n},
//                     "data": [{col: value}]}}
//
// Values are DuckDB's JSON rendering (getRowObjectsJson): BIGINT as a string,
// DOUBLE as a number or "NaN"/"Infinity", MAP as [{key, value}], LIST as an
// array. nans counts NaN and ±Inf in every DOUBLE and DOUBLE[] column.
// Local files only: DuckDB's extensions cannot be downloaded here.
import { DuckDBInstance } from '@duckdb/node-api';

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: node duckdb.mjs FILE.parquet...');
  process.exit(2);
}
const lit = (s) => "'" + s.replaceAll("'", "''") + "'";
const ident = (s) => '"' + s.replaceAll('"', '""') + '"';

const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
const all = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson();

const out = {};
for (const f of files) {
  const src = `read_parquet(${lit(f)})`;
  const res = {};
  res.rows = Number((await all(`SELECT count(*) AS n FROM ${src}`))[0].n);
  res.columns = (await all(`DESCRIBE SELECT * FROM ${src}`)).map((r) => ({ name: r.column_name, type: r.column_type }));
  res.kv = {};
  for (const r of await all(`SELECT decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata(${lit(f)})`)) {
    res.kv[r.k] = r.v;
  }
  res.compression = (await all(`SELECT DISTINCT compression FROM parquet_metadata(${lit(f)}) ORDER BY 1`)).map((r) => r.compression);
  const parts = [];
  for (const c of res.columns) {
    const col = ident(c.name);
    parts.push(`count(*) FILTER (WHERE ${col} IS NULL) AS ${ident('null:' + c.name)}`);
    if (c.type === 'DOUBLE') {
      parts.push(`count(*) FILTER (WHERE isnan(${col}) OR isinf(${col})) AS ${ident('nan:' + c.name)}`);
    } else if (c.type === 'DOUBLE[]') {
      parts.push(`coalesce(sum(len(list_filter(${col}, x -> isnan(x) OR isinf(x)))), 0) AS ${ident('nan:' + c.name)}`);
    }
  }
  res.nulls = {};
  res.nans = {};
  if (parts.length > 0) {
    const r = (await all(`SELECT ${parts.join(', ')} FROM ${src}`))[0];
    for (const [k, v] of Object.entries(r)) {
      const [kind, name] = [k.slice(0, k.indexOf(':')), k.slice(k.indexOf(':') + 1)];
      (kind === 'null' ? res.nulls : res.nans)[name] = Number(v);
    }
  }
  res.data = await all(`SELECT * FROM ${src}`);
  out[f] = res;
}
process.stdout.write(JSON.stringify(out));
