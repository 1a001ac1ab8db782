#!/usr/bin/env node
// Times an ONNX model on ONNX Runtime's CPU provider (onnxruntime-node), the
// peer of `kiln bench`: session creation, --warmup untimed runs, then --runs
// timed ones on the same feeds, with the same JSON fields as `kiln bench --json`
// (latency_ms min/median/p90/p99/mean/max, samples_ms, throughput_per_s,
// create_ms, peak_rss_bytes).
//
//   node bench/ort_bench.mjs MODEL --input NAME=FILE... [--threads N] [--warmup N]
//        [--runs N] [--opt-level disabled|basic|extended|all] [--json FILE]
//
// The session uses intraOpNumThreads=N, interOpNumThreads=1, sequential
// execution and graphOptimizationLevel 'all' (by default). Every input must be
// given (.npy or .pb; `kiln gen-inputs` writes them). Prints the JSON on
// stdout; --json also writes it to FILE. Latency is measured around
// `await session.run(feeds)`, so it includes onnxruntime-node's small
// per-call overhead (wrapping the feeds and outputs).
import fs from 'node:fs';
import { InputError, addInput, intArg, loadOrt, readInput } from './ort_io.mjs';

function die(msg, code = 2) {
  process.stderr.write(`ort_bench: error: ${msg}\n`);
  process.exit(code);
}

// Linear interpolation between closest ranks, as tools/kiln/bench.cc does.
function percentile(sorted, p) {
  if (!sorted.length) return 0;
  const pos = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(pos), hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

async function main() {
  const args = process.argv.slice(2);
  let model = null, json = null, optLevel = 'all', threads = 1, warmup = 3, runs = 20;
  const inputs = {};
  for (let i = 0; i < args.length; ++i) {
    const a = args[i];
    const next = () => (i + 1 < args.length ? args[++i] : die(`${a} needs a value`));
    if (a === '--input') addInput(inputs, next(), die);
    else if (a === '--threads') threads = intArg(a, next(), 1, die);
    else if (a === '--warmup') warmup = intArg(a, next(), 0, die);
    else if (a === '--runs') runs = intArg(a, next(), 1, die);
    else if (a === '--opt-level') optLevel = next();
    else if (a === '--json') json = next();
    else if (a === '-h' || a === '--help') {
      process.stdout.write(
        'usage: node bench/ort_bench.mjs MODEL --input NAME=FILE... [--threads N] [--warmup N] [--runs N] [--opt-level L] [--json FILE]\n');
      return;
    } else if (a.startsWith('-')) die(`unknown option ${a}`);
    else if (model === null) model = a;
    else die(`unexpected argument ${a}`);
  }
  if (!model) die('no MODEL given');
  if (!fs.existsSync(model)) die(`model file '${model}' does not exist`);

  const ort = loadOrt();
  const baselineRss = process.resourceUsage().maxRSS * 1024;
  const t0 = performance.now();
  const session = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: optLevel, intraOpNumThreads: threads, interOpNumThreads: 1,
    executionMode: 'sequential', executionProviders: ['cpu'],
  });
  const createMs = performance.now() - t0;
  for (const name of Object.keys(inputs))
    if (!session.inputNames.includes(name)) die(`the model has no input named '${name}' (inputs: ${session.inputNames.join(', ')})`);
  const feeds = {};
  for (const name of session.inputNames) {
    const file = inputs[name];
    if (!file) die(`input '${name}' was not given (--input ${name}=FILE)`);
    const t = readInput(file);
    feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
  }

  const run = async (what) => {
    try {
      await session.run(feeds);
    } catch (e) {
      die(`${what} failed: ${e.message}`, 1);
    }
  };
  for (let i = 0; i < warmup; ++i) await run(`warmup run ${i + 1}`);
  const samples = [];
  const tAll = performance.now();
  for (let i = 0; i < runs; ++i) {
    const s = performance.now();
    await run(`run ${i + 1}`);
    samples.push(performance.now() - s);
  }
  const totalMs = performance.now() - tAll;
  const peakRss = process.resourceUsage().maxRSS * 1024;
  const sorted = [...samples].sort((a, b) => a - b);
  const result = {
    runtime: 'onnxruntime-node',
    ort_version: ort.env?.versions?.common ?? ort.env?.versions?.node ?? null,
    model, provider: 'cpu', opt_level: optLevel, threads, warmup, runs,
    create_ms: createMs,
    latency_ms: {
      min: sorted[0], median: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99),
      mean: samples.reduce((a, b) => a + b, 0) / samples.length, max: sorted[sorted.length - 1],
    },
    samples_ms: samples,
    throughput_per_s: totalMs > 0 ? (1000 * runs) / totalMs : 0,
    peak_rss_bytes: peakRss,
    baseline_rss_bytes: baselineRss,
    rss_increase_bytes: peakRss - baselineRss,
  };
  const text = JSON.stringify(result, null, 1) + '\n';
  if (json) fs.writeFileSync(json, text);
  process.stdout.write(text);
}

main().catch((e) => die(e.message, e instanceof InputError ? 2 : 1));
