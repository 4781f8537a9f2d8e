// The DuckDB side of bench/compare.sh: the query a researcher would write
// instead of running crlbatch, over the same trace files.
//
//   node bench/duckdb_query.mjs [--auto] FILE...        (.jsonl, or .jsonl.zst)
//
// Runs, on an in-memory database with SET threads=$BENCH_DUCKDB_THREADS (2):
//
//   SELECT run_id, regime_id, count(*), avg(reward), var_samp(reward)
//   FROM read_ndjson([FILE, ...], columns={run_id: 'VARCHAR',
//                    regime_id: 'VARCHAR', reward: 'DOUBLE'})
//   GROUP BY run_id, regime_id
//
// (compression from the file name), reads every result row, and prints one
// JSON line to check the work against the other tools:
//
//   {"engine":"duckdb v1.5.6","schema":"columns","threads":2,"groups":80,"rows":2681900,"reward_sum":"…"}
//
// The columns clause makes this the bare query: DuckDB parses only the three
// fields. With --auto it is left out, as a researcher typing
// read_ndjson('sweep/*/*.jsonl') would: DuckDB then detects the schema from
// a sample and materialises every field (several times the memory, slower).
//
// reward_sum is Σ count·avg over the groups (10 significant digits, so that
// the order of a parallel sum does not show). @duckdb/node-api is the pinned
// one in integration/package.json: `npm ci --prefix integration`.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '..', 'integration', 'package.json'));

let DuckDBInstance;
try {
  ({ DuckDBInstance } = require('@duckdb/node-api'));
} catch (e) {
  console.error(`duckdb_query: cannot load @duckdb/node-api from integration/node_modules (${e.code || e.message}).`);
  console.error('Install the pinned version with: npm ci --prefix integration');
  process.exit(3);
}

let files = process.argv.slice(2);
const auto = files[0] === '--auto';
if (auto) files = files.slice(1);
if (files.length === 0) {
  console.error('usage: node bench/duckdb_query.mjs [--auto] FILE...');
  process.exit(2);
}
const threads = Number(process.env.BENCH_DUCKDB_THREADS || 2);
const lit = (s) => "'" + s.replaceAll("'", "''") + "'";

const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
await con.run(`SET threads=${threads}`);
const sql = `SELECT run_id, regime_id, count(*) AS n, avg(reward) AS mean, var_samp(reward) AS var
             FROM read_ndjson([${files.map(lit).join(', ')}]${auto ? '' : `,
                  columns={run_id: 'VARCHAR', regime_id: 'VARCHAR', reward: 'DOUBLE'}`})
             GROUP BY run_id, regime_id`;
const rows = (await con.runAndReadAll(sql)).getRowObjects();

let n = 0;
let sum = 0;
for (const r of rows) {
  n += Number(r.n);
  sum += Number(r.n) * r.mean;
  if (!(r.var >= 0) && Number(r.n) > 1) {
    throw new Error(`bad variance for ${r.run_id}/${r.regime_id}: ${r.var}`);
  }
}
const version = (await con.runAndReadAll('SELECT version() AS v')).getRowObjects()[0].v;
process.stdout.write(JSON.stringify({
  engine: `duckdb ${version}`, schema: auto ? 'auto' : 'columns', threads, groups: rows.length, rows: n, reward_sum: sum.toPrecision(10),
}) + '\n');
