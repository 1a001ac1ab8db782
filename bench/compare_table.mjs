#!/usr/bin/env node
// The table of bench/compare.sh. Reads its manifest (one line per round:
// model \t threads \t kiln|ort \t JSON file or FAIL), takes each peer's
// median of the per-round medians, and prints model, threads, both medians,
// the ratio kiln/ORT and the geometric mean of the ratios.
//
//   node bench/compare_table.mjs MANIFEST [--markdown] [--provider P] [--rounds R]
//        [--runs N] [--warmup N] [--machine TEXT] [--date TEXT] [--rev TEXT]
import fs from 'node:fs';

function die(msg) {
  process.stderr.write(`compare_table: error: ${msg}\n`);
  process.exit(2);
}

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

const args = process.argv.slice(2);
const opt = { markdown: false };
let manifest = null;
for (let i = 0; i < args.length; ++i) {
  const a = args[i];
  if (a === '--markdown') opt.markdown = true;
  else if (a.startsWith('--')) {
    if (i + 1 >= args.length) die(`${a} needs a value`);
    opt[a.slice(2)] = args[++i];
  } else if (manifest === null) manifest = a;
  else die(`unexpected argument ${a}`);
}
if (!manifest) die('no MANIFEST given');

// key "model\tthreads" -> { model, threads, kiln: [medians], ort: [medians], failed: {kiln, ort} }
const rows = new Map();
for (const line of fs.readFileSync(manifest, 'utf8').split('\n')) {
  if (!line.trim()) continue;
  const [model, threads, peer, file] = line.split('\t');
  const key = `${model}\t${threads}`;
  if (!rows.has(key)) rows.set(key, { model, threads, kiln: [], ort: [], failed: { kiln: 0, ort: 0 } });
  const row = rows.get(key);
  if (file === 'FAIL') ++row.failed[peer];
  else row[peer].push(JSON.parse(fs.readFileSync(file, 'utf8')).latency_ms.median);
}

const fmt = (v) => (v === null ? '—' : v >= 100 ? v.toFixed(1) : v >= 10 ? v.toFixed(2) : v.toFixed(3));
const table = [];
const ratios = [];
for (const row of rows.values()) {
  // A peer that failed in any round gets no figure: a median over fewer rounds would not be comparable.
  const k = row.kiln.length && !row.failed.kiln ? median(row.kiln) : null;
  const o = row.ort.length && !row.failed.ort ? median(row.ort) : null;
  const ratio = k !== null && o !== null && o > 0 ? k / o : null;
  if (ratio !== null) ratios.push(ratio);
  table.push([row.model, row.threads, k === null ? 'fail' : fmt(k), o === null ? 'fail' : fmt(o), ratio === null ? '—' : ratio.toFixed(2)]);
}
const geomean = ratios.length ? Math.exp(ratios.reduce((s, r) => s + Math.log(r), 0) / ratios.length) : null;
const head = ['model', 'threads', 'kiln median ms', 'ORT median ms', 'kiln/ORT'];
const foot = ['geometric mean', '', '', '', geomean === null ? '—' : geomean.toFixed(2)];
const what = `kiln --provider ${opt.provider ?? '?'} vs ONNX Runtime CPU; median of ${opt.rounds ?? '?'} alternated rounds, ` +
  `each the median of ${opt.runs ?? '?'} runs after ${opt.warmup ?? '?'} warmup`;

if (opt.markdown) {
  const out = [];
  const meta = [opt.date, opt.machine, opt.rev && `kiln ${opt.rev}`, 'onnxruntime-node 1.30.0'].filter(Boolean).join(', ');
  out.push(`${what}. ${meta}.`, '');
  out.push(`| ${head.join(' | ')} |`, `|${head.map((h, i) => (i === 0 ? ':---' : '---:')).join('|')}|`);
  for (const r of table) out.push(`| ${r.join(' | ')} |`);
  out.push(`| **${foot[0]}** | | | | **${foot[4]}** |`);
  process.stdout.write(out.join('\n') + '\n');
} else {
  const all = [head, ...table, foot];
  const w = head.map((_, c) => Math.max(...all.map((r) => String(r[c]).length)));
  const line = (r) => r.map((v, c) => (c === 0 ? String(v).padEnd(w[c]) : String(v).padStart(w[c]))).join('  ');
  process.stdout.write(`${what}\n${line(head)}\n${line(head.map((_, c) => '-'.repeat(w[c])))}\n`);
  for (const r of table) process.stdout.write(line(r) + '\n');
  process.stdout.write(line(foot) + '\n');
}
