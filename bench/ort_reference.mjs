#!/usr/bin/env node
// Runs an ONNX model on ONNX Runtime (onnxruntime-node, CPU) and writes its
// outputs as .npy, so kiln's outputs can be compared with an independent
// runtime on exactly the same inputs.
//
//   node bench/ort_reference.mjs MODEL --input NAME=FILE [--input ...] --output-dir DIR
//        [--opt-level disabled|basic|extended|all] [--threads N]
//
// Inputs: .npy (NumPy, C order, little-endian) or .pb (ONNX TensorProto, the
// backend-test format). Each output is written as DIR/<name>.npy, the name
// made file-system safe the way `kiln run` does ([A-Za-z0-9._-] kept, other
// characters '_'). onnxruntime-node is loaded from $KILN_NPM_DIR
// (default ~/.cache/kiln-npm, where scripts/ort-setup.sh installs it);
// the readers and the loader are in ort_io.mjs.
import fs from 'node:fs';
import path from 'node:path';
import { InputError, addInput, loadOrt, readInput, safeName, writeNpy } from './ort_io.mjs';

function die(msg, code = 2) {
  process.stderr.write(`ort_reference: error: ${msg}\n`);
  process.exit(code);
}

// ---- main -------------------------------------------------------------------
function summary(name, type, dims, data) {
  let mn = Infinity, mx = -Infinity, sum = 0, n = 0;
  if (type !== 'float16') {
    for (const v0 of data) {
      const v = Number(v0);
      if (Number.isNaN(v)) continue;
      mn = Math.min(mn, v); mx = Math.max(mx, v);
      if (Number.isFinite(v)) { sum += v; ++n; }
    }
  }
  const g = (v) => Number(v.toPrecision(6));
  return `${name}  ${type}[${dims.join(',')}]` + (n ? `  min=${g(mn)} max=${g(mx)} mean=${g(sum / n)}` : '');
}

async function main() {
  const args = process.argv.slice(2);
  let model = null, outDir = null, optLevel = 'all', threads = 1;
  const inputs = {};
  for (let i = 0; i < args.length; ++i) {
    const a = args[i];
    const next = () => (i + 1 < args.length ? args[++i] : die(`${a} needs a value`));
    if (a === '--input') addInput(inputs, next(), die);
    else if (a === '--output-dir') outDir = next();
    else if (a === '--opt-level') optLevel = next();
    else if (a === '--threads') threads = Number(next());
    else if (a === '-h' || a === '--help') {
      process.stdout.write('usage: node bench/ort_reference.mjs MODEL --input NAME=FILE... --output-dir DIR [--opt-level L] [--threads N]\n');
      return;
    } else if (a.startsWith('-')) die(`unknown option ${a}`);
    else if (model === null) model = a;
    else die(`unexpected argument ${a}`);
  }
  if (!model) die('no MODEL given');
  if (!outDir) die('no --output-dir given');
  if (!fs.existsSync(model)) die(`model file '${model}' does not exist`);

  const ort = loadOrt();
  const session = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: optLevel, intraOpNumThreads: threads, interOpNumThreads: 1, executionProviders: ['cpu'],
  });
  const feeds = {};
  for (const name of session.inputNames) {
    const file = inputs[name];
    if (!file) die(`input '${name}' was not given (--input ${name}=FILE)`);
    const t = readInput(file);
    feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
  }
  for (const name of Object.keys(inputs))
    if (!session.inputNames.includes(name)) die(`the model has no input named '${name}' (inputs: ${session.inputNames.join(', ')})`);
  let results;
  try {
    results = await session.run(feeds);
  } catch (e) {
    die(`run failed: ${e.message}`, 1);
  }
  fs.mkdirSync(outDir, { recursive: true });
  for (const name of session.outputNames) {
    const t = results[name];
    writeNpy(path.join(outDir, safeName(name) + '.npy'), t.type, t.dims, t.data);
    process.stdout.write(summary(name, t.type, t.dims, t.data) + '\n');
  }
}

main().catch((e) => die(e.message, e instanceof InputError ? 2 : 1));
