// Runs SQL with DuckDB (@duckdb/node-api), as a notebook would, and prints
// the rows of the last statement as JSON (getRowObjectsJson: BIGINT as a
// string, DOUBLE as a number, DATE as "YYYY-MM-DD"):
//
//   node duckdb_sql.mjs DIR < script.sql
//   [{"col": value, ...}, ...]
//
// The script runs with DIR as the working directory, so that the README's
// relative paths resolve under it. Statements are separated by ";" at the
// end of a line. Local files only.
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync } from 'node:fs';

if (process.argv.length !== 3) {
  console.error('usage: node duckdb_sql.mjs DIR < script.sql');
  process.exit(2);
}
process.chdir(process.argv[2]);
const script = readFileSync(0, 'utf8');
const statements = script.split(/;\s*\n/).map((s) => s.trim()).filter((s) => s !== '' && !/^(--[^\n]*\n?)*$/.test(s));
const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
let rows = [];
for (const s of statements) {
  rows = (await con.runAndReadAll(s)).getRowObjectsJson();
}
process.stdout.write(JSON.stringify(rows));
