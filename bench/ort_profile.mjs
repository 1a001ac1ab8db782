#!/usr/bin/env node
// ONNX Runtime's own per-node times for a model (its CPU provider's
// profiler), the peer of `kiln bench --profile`: after --warmup untimed
// runs, --runs profiled runs; prints each node's median kernel time in
// execution order, then the sum and the median whole run. ORT names its
// nodes after their output values (NCHWc nodes end in `_nchwc`), so match
// them to kiln's by the value name, not the node name.
//
//   node bench/ort_profile.mjs MODEL --input NAME=FILE... [--threads N] [--warmup N] [--runs N]
//
// The session is ort_bench.mjs's (intraOpNumThreads=N, interOpNumThreads=1,
// sequential, graphOptimizationLevel 'all'). The profiler adds a little time
// per node; compare its figures with kiln's per-node ones, not with
// ort_bench.mjs latencies.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { addInput, intArg, loadOrt, readInput } from './ort_io.mjs';

function die(msg, code = 2) {
  process.stderr.write(`ort_profile: error: ${msg}\n`);
  process.exit(code);
}

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function main() {
  const args = process.argv.slice(2);
  let model = null, threads = 1, warmup = 3, runs = 20;
  const inputs = {};
  for (let i = 0; i < args.length; ++i) {
    const a = args[i];
    const next = () => (i + 1 < args.length ? args[++i] : die(`${a} needs a value`));
    if (a === '--input') addInput(inputs, next(), die);
    else if (a === '--threads') threads = intArg(a, next(), 1, die);
    else if (a === '--warmup') warmup = intArg(a, next(), 0, die);
    else if (a === '--runs') runs = intArg(a, next(), 1, die);
    else if (a === '-h' || a === '--help') {
      process.stdout.write('usage: node bench/ort_profile.mjs MODEL --input NAME=FILE... [--threads N] [--warmup N] [--runs N]\n');
      return;
    } else if (a.startsWith('-')) die(`unknown option ${a}`);
    else if (model === null) model = a;
    else die(`unexpected argument ${a}`);
  }
  if (!model) die('no MODEL given');
  if (!fs.existsSync(model)) die(`model file '${model}' does not exist`);

  const ort = loadOrt();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-ort-profile-'));
  try {
    const options = { graphOptimizationLevel: 'all', intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential',
                      executionProviders: ['cpu'] };
    // Warm-up runs in a session of their own, so the profile holds only the timed runs.
    const feeds = (session) => {
      const f = {};
      for (const name of session.inputNames) {
        if (!inputs[name]) die(`input '${name}' was not given (--input ${name}=FILE)`);
        const t = readInput(inputs[name]);
        f[name] = new ort.Tensor(t.type, t.data, t.dims);
      }
      return f;
    };
    const session = await ort.InferenceSession.create(model, { ...options, enableProfiling: true, profileFilePrefix: path.join(dir, 'p') });
    const f = feeds(session);
    for (let i = 0; i < warmup + runs; ++i) {
      try {
        await session.run(f);
      } catch (e) {
        die(`run ${i + 1} failed: ${e.message}`, 1);
      }
    }
    session.endProfiling();
    const file = fs.readdirSync(dir).find((n) => n.endsWith('.json'));
    if (!file) die('ONNX Runtime wrote no profile');
    const events = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    // One model_run event per run; node kernel times in run order after it.
    const runEvents = events.filter((e) => e.cat === 'Session' && e.name === 'model_run').slice(warmup);
    const firstTimed = runEvents.length ? runEvents[0].ts : Infinity;
    const nodes = new Map();  // name -> {op, durations}, in first-seen (execution) order
    for (const e of events) {
      if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time') || e.ts < firstTimed) continue;
      const name = e.name.slice(0, -'_kernel_time'.length);
      if (!nodes.has(name)) nodes.set(name, { op: e.args?.op_name ?? '', durations: [] });
      nodes.get(name).durations.push(e.dur / 1000);
    }
    let sum = 0;
    process.stdout.write(`node (ORT's name)${' '.repeat(53)} op                   median ms\n`);
    for (const [name, n] of nodes) {
      const m = median(n.durations);
      sum += m;
      process.stdout.write(`${name.slice(-70).padEnd(70)} ${n.op.padEnd(20)} ${m.toFixed(3).padStart(9)}\n`);
    }
    process.stdout.write(`sum of node medians ${sum.toFixed(3)} ms; median run ${median(runEvents.map((e) => e.dur / 1000)).toFixed(3)} ms ` +
                         `(${runEvents.length} profiled runs, ${threads} thread${threads > 1 ? 's' : ''})\n`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main();
