// Prints the tables of bench/compare.sh (Markdown) from its measurements.
//
//   node bench/summarize.mjs DIR/results.tsv DIR/run.env [BASELINE/results.tsv]
//
// results.tsv: one line per timed run, tab-separated:
//   tool input round bytes wall_s user_s sys_s maxrss_kb
// run.env: key=value lines describing the invocation (machine, load, sweep).
// The baseline is the results.tsv of the 1 GB run: the peak RSS of crlbatch
// on it is compared with this run's (issue 7: within 1.5x with spilling).
//
// Every figure is the median over rounds (peak RSS: median, and the maximum).
// MB is 10^6 bytes of JSONL, decompressed: zstd input is counted by the JSON
// it holds, so that its MB/s compares with plain. MiB of RSS is 2^20 bytes.
import { readFileSync } from 'node:fs';

const [resultsPath, envPath, baselinePath] = process.argv.slice(2);
if (!resultsPath || !envPath) {
  console.error('usage: node bench/summarize.mjs results.tsv run.env [baseline-results.tsv]');
  process.exit(2);
}

const readResults = (p) => readFileSync(p, 'utf8').split('\n').filter((l) => l && !l.startsWith('#')).map((l) => {
  const [tool, input, round, bytes, wall, user, sys, rss, others] = l.split('\t');
  return { tool, input, round: +round, bytes: +bytes, wall: +wall, cpu: +user + +sys, rss: +rss / 1024, others: +(others || 0) };
});
const env = Object.fromEntries(readFileSync(envPath, 'utf8').split('\n').filter((l) => l.includes('='))
  .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

function summarize(results) {
  const groups = new Map();
  for (const r of results) {
    const k = `${r.tool}\t${r.input}`;
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k).push(r);
  }
  const out = new Map();
  for (const [k, rs] of groups) {
    const [tool, input] = k.split('\t');
    const bytes = rs[0].bytes;
    const wall = median(rs.map((r) => r.wall));
    const cpu = median(rs.map((r) => r.cpu));
    out.set(k, {
      tool, input, n: rs.length, mb: bytes / 1e6, wall, cpu,
      mbps: bytes / 1e6 / wall, mbpsCPU: bytes / 1e6 / cpu,
      rss: median(rs.map((r) => r.rss)), rssMax: Math.max(...rs.map((r) => r.rss)),
      best: Math.min(...rs.map((r) => r.wall)), others: median(rs.map((r) => r.others)),
      walls: rs.map((r) => r.wall),
    });
  }
  return out;
}

const S = summarize(readResults(resultsPath));
const get = (tool, input) => S.get(`${tool}\t${input}`);
const f = (x, d = 2) => (x === undefined || !Number.isFinite(x) ? '--' : x.toFixed(d));
const pct = (x) => (Number.isFinite(x) ? `${(100 * x).toFixed(0)} %` : '--');
const mark = (ok) => (ok === undefined ? '' : ok ? 'met' : 'not met');
const lines = [];
const p = (s = '') => lines.push(s);

const label = {
  crlbatch: 'crlbatch score',
  'crlbatch-nospill': 'crlbatch score, default --memory-limit',
  'crlbatch-c1': 'crlbatch score --concurrency 1',
  'crlbatch-1core': 'crlbatch score --concurrency 1, GOMAXPROCS=1',
  duckdb: `DuckDB in-process read_ndjson(columns=…) + GROUP BY, ${env.duckdb_threads || 2} threads`,
  'duckdb-auto': `DuckDB in-process read_ndjson (auto-detected schema) + GROUP BY, ${env.duckdb_threads || 2} threads`,
  'duckdb-node': `DuckDB through Node read_ndjson(columns=…) + GROUP BY, ${env.duckdb_threads || 2} threads`,
  pandas: 'pandas read_json + groupby',
};
const inputLabel = {
  plain: 'plain', zstd: 'zstd', 'slice-plain': `plain, ${env.slice_objects}-object slice`,
  'slice-zstd': `zstd, ${env.slice_objects}-object slice`,
  'one-plain': 'plain, as one object', 'one-zstd': 'zstd, as one object',
  'irr-plain': 'irregular, plain', 'irr-zstd': 'irregular, zstd',
  'irr-one-plain': 'irregular, plain, as one object', 'irr-one-zstd': 'irregular, zstd, as one object',
};

const sweeps = [];
if (env.raw_bytes) sweeps.push(`regular: ${f(env.raw_bytes / 1e6, 0)} MB of JSONL, ${env.rows} rows in ${env.objects} objects ` +
  `(crlbatch synth, one run each, per-step extras), zstd copy ${f(env.zstd_bytes / 1e6, 0)} MB`);
if (env.irr_raw_bytes) sweeps.push(`irregular: ${f(env.irr_raw_bytes / 1e6, 0)} MB of JSONL, ${env.irr_rows} rows in ${env.irr_objects} objects ` +
  `(bench/irregulargen, json.dumps rows), zstd copy ${f(env.irr_zstd_bytes / 1e6, 0)} MB`);
p(`### ${sweeps.join('; ')}; ${env.rounds} alternating rounds, medians`);
p();
p(`- machine: ${env.nproc} cores, ${env.cpu}, ${env.mem_gib} GiB; ${env.go}; ${env.node}; ${env.python}`);
p(`- crlbatch ${env.crlbatch_rev}; ${env.duckdb_engine || 'DuckDB not run'}; ${env.pandas_engine || 'pandas not run'}`);
p(`- ${env.date}; load average before ${env.load_before}, after ${env.load_after}`);
p(`- crlbatch flags: \`${env.crlbatch_flags}\`${env.memory_limit ? `, \`--memory-limit ${env.memory_limit}\`` : ''}`);
p();
p('| tool | input | MB | wall s | CPU s | MB/s | MB/s per CPU s | peak RSS MiB (median / max) | best wall s | others\' CPU |');
p('| :-- | :-- | --: | --: | --: | --: | --: | --: | --: | --: |');
const order = ['crlbatch', 'crlbatch-nospill', 'duckdb', 'duckdb-auto', 'duckdb-node', 'pandas', 'crlbatch-c1', 'crlbatch-1core'];
const inputs = ['plain', 'zstd', 'one-plain', 'one-zstd', 'irr-plain', 'irr-zstd', 'irr-one-plain', 'irr-one-zstd', 'slice-plain', 'slice-zstd'];
for (const input of inputs) {
  for (const tool of order) {
    const s = get(tool, input);
    if (!s) continue;
    p(`| ${label[tool]} | ${inputLabel[input]} | ${f(s.mb, 0)} | ${f(s.wall)} | ${f(s.cpu)} | ${f(s.mbps, 0)} | ` +
      `${f(s.mbpsCPU, 0)} | ${f(s.rss, 0)} / ${f(s.rssMax, 0)} | ${f(s.best)} | ${pct(s.others)} |`);
  }
}
p();
p('Medians over the rounds; best wall s is the fastest round. Others\' CPU: the median share of the machine that');
p('other processes used during the runs (from /proc/stat); well above 0 % means the times above include');
p('competition for the cores, and the comparison holds only as far as it hit every tool alike.');
const busy = [...S.values()].filter((s) => s.others > 0.1);
if (busy.length) p(`\n**The machine was shared**: others took over 10 % of it during ${busy.map((s) => `${s.tool}/${s.input}`).join(', ')}.`);
p();

// Ratios: throughput > 1 means crlbatch is faster; RSS < 1 means it holds less.
const shapes = [['regular', ''], ['irregular', 'irr-']].filter(([, pre]) => [...S.keys()].some((k) => k.split('\t')[1].startsWith(pre) && (pre || !k.split('\t')[1].startsWith('irr-'))));
// The pandas slice is of the regular sweep only.
const cols = shapes.flatMap(([name, pre]) => [[`${name}, plain`, pre + 'plain', pre + 'one-plain', pre ? '' : 'slice-plain'],
  [`${name}, zstd`, pre + 'zstd', pre + 'one-zstd', pre ? '' : 'slice-zstd']]);
p(`| ratio (crlbatch / other) | ${cols.map((c) => c[0]).join(' | ')} | target |`);
p(`| :-- | ${cols.map(() => '--:').join(' | ')} | :-- |`);
const ratio = (a, b, what) => {
  if (!a || !b) return NaN;
  switch (what) {
    case 'rss': return a.rss / b.rss;
    case 'cpu': return a.mbpsCPU / b.mbpsCPU;
    case 'wall': return a.wall / b.wall;
    default: return a.mbps / b.mbps;
  }
};
// row NAME TA TB WHAT WHICH TARGET: WHICH picks the input of a column (1: 20 objects, 2: one object, 3: the slice);
// tb may differ in input (the whole sweep against the slice: which2).
const row = (name, ta, tb, what, which, target, which2 = which) => {
  const rs = cols.map((c) => ratio(get(ta, c[which]), get(tb, c[which2]), what));
  if (!rs.some(Number.isFinite)) return;
  p(`| ${name} | ${rs.map((r) => (Number.isFinite(r) ? `${f(r)}x` : '--')).join(' | ')} | ${target(rs)} |`);
};
const all = (ok) => (rs) => mark(rs.filter(Number.isFinite).every(ok));
row('throughput, crlbatch / DuckDB in-process (20 objects)', 'crlbatch', 'duckdb', 'mbps', 1, (rs) => `issue 16: ≥ 1.0x everywhere: ${all((r) => r >= 1)(rs)}`);
row('MB per CPU second, crlbatch / DuckDB in-process (20 objects)', 'crlbatch', 'duckdb', 'cpu', 1, () => '');
row('peak RSS, crlbatch / DuckDB in-process (20 objects)', 'crlbatch', 'duckdb', 'rss', 1, (rs) => `issue 16: < 1.0x everywhere: ${all((r) => r < 1)(rs)}`);
row('throughput, crlbatch / DuckDB in-process (one object)', 'crlbatch', 'duckdb', 'mbps', 2, (rs) => `≥ 1.0x: ${all((r) => r >= 1)(rs)}`);
row('peak RSS, crlbatch / DuckDB in-process (one object)', 'crlbatch', 'duckdb', 'rss', 2, (rs) => `< 1.0x: ${all((r) => r < 1)(rs)}`);
row('throughput, crlbatch / DuckDB with auto-detected schema', 'crlbatch', 'duckdb-auto', 'mbps', 1, () => '');
row('peak RSS, crlbatch / DuckDB with auto-detected schema', 'crlbatch', 'duckdb-auto', 'rss', 1, () => '');
row('throughput, crlbatch / pandas (same slice; pandas on one core)', 'crlbatch', 'pandas', 'mbps', 3, () => '');
row('MB per CPU second, crlbatch / pandas (same slice)', 'crlbatch', 'pandas', 'cpu', 3, () => '');
row('peak RSS, crlbatch / pandas (same slice)', 'crlbatch', 'pandas', 'rss', 3, () => '');
row('wall time, DuckDB through Node / in-process', 'duckdb-node', 'duckdb', 'wall', 1, () => '');
row('peak RSS, DuckDB through Node / in-process', 'duckdb-node', 'duckdb', 'rss', 1, () => '');
p();
const dn = shapes.map(([name, pre]) => [name, get('duckdb-node', pre + 'plain'), get('duckdb', pre + 'plain')]).filter(([, a, b]) => a && b);
for (const [name, a, b] of dn) {
  p(`DuckDB through Node against in-process, ${name} plain: ${f(a.wall - b.wall)} s more wall time, ${f(a.cpu - b.cpu)} s more CPU, ` +
    `${f(a.rss - b.rss, 0)} MiB more peak RSS (medians).`);
}
if (dn.length) p();

const zs = [];
for (const [tool, ip, iz] of [['crlbatch', 'plain', 'zstd'], ['duckdb', 'plain', 'zstd'], ['duckdb-auto', 'plain', 'zstd'],
  ['crlbatch', 'irr-plain', 'irr-zstd'], ['duckdb', 'irr-plain', 'irr-zstd'], ['pandas', 'slice-plain', 'slice-zstd'],
  ['crlbatch', 'slice-plain', 'slice-zstd']]) {
  const a = get(tool, ip);
  const b = get(tool, iz);
  if (a && b) zs.push(`${tool}${ip.startsWith('slice') ? ' (slice)' : ip.startsWith('irr') ? ' (irregular)' : ''} ${pct(b.mbps / a.mbps)}`);
}
if (zs.length) {
  const c = get('crlbatch', 'plain');
  const z = get('crlbatch', 'zstd');
  p(`zstd throughput as a share of plain (MB/s of the JSON inside): ${zs.join(', ')}` +
    (c && z ? ` — issue 7 target for crlbatch ≥ 70 %: ${mark(z.mbps / c.mbps >= 0.7)}.` : '.'));
  p();
}

const c2 = get('crlbatch', 'plain');
const c1 = get('crlbatch-c1', 'plain');
const k1 = get('crlbatch-1core', 'plain');
if (c2 && (c1 || k1)) {
  const parts = [];
  if (c1) parts.push(`--concurrency 1 → ${env.nproc}: ${f(c1.wall / c2.wall)}x (${f(c1.wall)} s → ${f(c2.wall)} s)`);
  if (k1) parts.push(`one core (GOMAXPROCS=1 --concurrency 1) → ${env.nproc}: ${f(k1.wall / c2.wall)}x (${f(k1.wall)} s → ${f(c2.wall)} s)`);
  p(`crlbatch speed-up, wall time on plain input: ${parts.join('; ')} — issue 7 target ≥ 1.6x: ` +
    `${mark((k1 || c1).wall / c2.wall >= 1.6)}${k1 ? ' (judged on the one-core run)' : ''}.`);
  p();
}

for (const pre of ['', 'irr-']) {
  const o2 = get('crlbatch', pre + 'one-plain');
  const o1 = get('crlbatch-c1', pre + 'one-plain');
  if (o2 && o1) {
    p(`The ${pre ? 'irregular' : 'regular'} sweep as one object: decoded in chunks on ${env.nproc} cores against --concurrency 1 (one goroutine), ` +
      `${f(o1.wall / o2.wall)}x (${f(o1.wall)} s → ${f(o2.wall)} s wall, ${f(o1.cpu)} → ${f(o2.cpu)} s CPU).`);
    p();
  }
}

if (baselinePath) {
  const B = summarize(readResults(baselinePath));
  const b = B.get('crlbatch\tplain');
  const bz = B.get('crlbatch\tzstd');
  const here = [['plain', c2, b], ['zstd', get('crlbatch', 'zstd'), bz]].filter(([, a, c]) => a && c);
  if (here.length) {
    p(`Flat memory: crlbatch peak RSS on this ${f(env.raw_bytes / 1e9, 1)} GB sweep` +
      `${env.memory_limit ? ` (--memory-limit ${env.memory_limit})` : ''} against the ${f(b.mb / 1e3, 1)} GB run's (default limit):`);
    p();
    p('| input | this run, max MiB | 1 GB run, median MiB | ratio | issue 7 target ≤ 1.5x |');
    p('| :-- | --: | --: | --: | :-- |');
    for (const [input, a, c] of here) {
      p(`| ${input} | ${f(a.rssMax, 0)} | ${f(c.rss, 0)} | ${f(a.rssMax / c.rss)}x | ${mark(a.rssMax / c.rss <= 1.5)} |`);
    }
    const ns = get('crlbatch-nospill', 'plain');
    if (ns) p(`\nWithout the limit (default: half the machine's memory, no spilling) the same sweep peaks at ${f(ns.rssMax, 0)} MiB (${f(ns.rssMax / b.rss)}x).`);
    p();
  }
}

p('Wall times per round (s): ' + [...S.values()].map((s) => `${s.tool}/${s.input} ${s.walls.map((w) => w.toFixed(2)).join(' ')}`).join('; '));
process.stdout.write(lines.join('\n') + '\n');
