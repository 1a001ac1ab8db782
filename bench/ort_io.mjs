// Shared by bench/ort_reference.mjs and bench/ort_bench.mjs: loading
// onnxruntime-node from $KILN_NPM_DIR (default ~/.cache/kiln-npm, where
// scripts/ort-setup.sh installs it), reading .npy / .pb (ONNX TensorProto)
// inputs, writing .npy outputs, and file-system-safe names as `kiln run` makes
// them. Readers throw InputError (a bad input file: exit code 2 for callers).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

export class InputError extends Error {}
function fail(msg) {
  throw new InputError(msg);
}

// The scripts' shared option parsing; `die` reports and exits (each script its own).
// `--input NAME=FILE` into inputs[NAME].
export function addInput(inputs, spec, die) {
  const eq = spec.indexOf('=');
  if (eq <= 0) die(`--input '${spec}' must be NAME=FILE`);
  inputs[spec.slice(0, eq)] = spec.slice(eq + 1);
}

// An integer option's value, at least `min`.
export function intArg(name, text, min, die) {
  const v = Number(text);
  if (!Number.isInteger(v) || v < min) die(`${name} must be an integer >= ${min}, got '${text}'`);
  return v;
}

export function loadOrt() {
  const npmDir = process.env.KILN_NPM_DIR || path.join(os.homedir(), '.cache', 'kiln-npm');
  try {
    return createRequire(path.join(npmDir, 'package.json'))('onnxruntime-node');
  } catch (e) {
    fail(`cannot load onnxruntime-node from ${npmDir} (run scripts/ort-setup.sh): ${e.message.split('\n')[0]}`);
  }
}

// An input tensor from FILE: .pb is a TensorProto, anything else .npy.
export function readInput(file) {
  return file.endsWith('.pb') ? readTensorProto(file) : readNpy(file);
}

// [A-Za-z0-9._-] kept, other characters '_' (as `kiln run` names files).
export function safeName(name) {
  let out = name.replace(/[^A-Za-z0-9._-]/g, '_');
  if (out === '' || out === '.' || out === '..') out = '_' + out;
  return out.slice(0, 200);
}

// ---- .npy -----------------------------------------------------------------
const NPY_TYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '<f2': ['float16', Uint16Array],
  '|i1': ['int8', Int8Array], '<i2': ['int16', Int16Array], '<i4': ['int32', Int32Array], '<i8': ['int64', BigInt64Array],
  '|u1': ['uint8', Uint8Array], '<u2': ['uint16', Uint16Array], '<u4': ['uint32', Uint32Array], '<u8': ['uint64', BigUint64Array],
  '|b1': ['bool', Uint8Array],
};
const NPY_DESCR = Object.fromEntries(Object.entries(NPY_TYPES).map(([d, [t]]) => [t, d]));

export function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') fail(`${file}: not a .npy file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + hlen);
  const descr = /'descr':\s*'([^']*)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)?.[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (!descr || !fortran || shapeText === undefined) fail(`${file}: malformed .npy header`);
  if (fortran === 'True') fail(`${file}: fortran_order arrays are not supported`);
  const type = NPY_TYPES[descr.replace(/^=/, '<')];
  if (!type) fail(`${file}: unsupported dtype '${descr}'`);
  const dims = shapeText.split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  const [ortType, Arr] = type;
  const bytes = count * Arr.BYTES_PER_ELEMENT;
  const dataStart = start + hlen;
  if (buf.length - dataStart !== bytes) fail(`${file}: data holds ${buf.length - dataStart} bytes, shape [${dims}] needs ${bytes}`);
  const copy = new Uint8Array(bytes);
  copy.set(buf.subarray(dataStart, dataStart + bytes));
  return { type: ortType, dims, data: new Arr(copy.buffer) };
}

export function writeNpy(file, type, dims, data) {
  const descr = NPY_DESCR[type];
  if (!descr) throw new Error(`output type ${type} cannot be written as .npy`);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  const pad = (64 - ((10 + dict.length + 1) % 64)) % 64;
  dict += ' '.repeat(pad) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(dict.length, 8);
  let body;
  if (type === 'bool') body = Buffer.from(Uint8Array.from(data, (v) => (v ? 1 : 0)));
  else body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(dict, 'latin1'), body]));
}

// ---- TensorProto (.pb) ------------------------------------------------------
// A minimal protobuf reader for the TensorProto fields the backend tests use.
const ONNX_TYPES = {
  1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array], 4: ['uint16', Uint16Array],
  5: ['int16', Int16Array], 6: ['int32', Int32Array], 7: ['int64', BigInt64Array], 9: ['bool', Uint8Array],
  10: ['float16', Uint16Array], 11: ['float64', Float64Array], 12: ['uint32', Uint32Array], 13: ['uint64', BigUint64Array],
};

export function readTensorProto(file) {
  const buf = fs.readFileSync(file);
  let pos = 0;
  const varint = () => {
    let result = 0n, shift = 0n;
    for (;;) {
      if (pos >= buf.length) fail(`${file}: truncated TensorProto`);
      const b = buf[pos++];
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
      shift += 7n;
    }
  };
  const dims = [], f32 = [], f64 = [], i32 = [], i64 = [], u64 = [];
  let dataType = 0, raw = null;
  while (pos < buf.length) {
    const key = Number(varint());
    const field = key >> 3, wire = key & 7;
    const packed = (fn) => {
      if (wire === 2) { const n = Number(varint()); const end = pos + n; while (pos < end) fn(); } else fn();
    };
    if (field === 1) packed(() => dims.push(Number(BigInt.asIntN(64, varint()))));
    else if (field === 2) dataType = Number(varint());
    else if (field === 4) packed(() => { f32.push(buf.readFloatLE(pos)); pos += 4; });
    else if (field === 5) packed(() => i32.push(Number(BigInt.asIntN(32, varint()))));
    else if (field === 7) packed(() => i64.push(BigInt.asIntN(64, varint())));
    else if (field === 10) packed(() => { f64.push(buf.readDoubleLE(pos)); pos += 8; });
    else if (field === 11) packed(() => u64.push(BigInt.asUintN(64, varint())));
    else if (field === 9) { const n = Number(varint()); raw = buf.subarray(pos, pos + n); pos += n; }
    else if (field === 14) fail(`${file}: external data in input tensors is not supported`);
    else if (wire === 0) varint();
    else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else if (wire === 2) { const n = Number(varint()); pos += n; }  // read n before pos: `pos += varint()` adds to the old pos
    else fail(`${file}: unsupported protobuf wire type ${wire}`);
  }
  const type = ONNX_TYPES[dataType];
  if (!type) fail(`${file}: unsupported TensorProto data_type ${dataType}`);
  const [ortType, Arr] = type;
  const count = dims.reduce((a, b) => a * b, 1);
  let data;
  if (raw) {
    const copy = new Uint8Array(raw.length);
    copy.set(raw);
    data = new Arr(copy.buffer);
  } else {
    const src = { 1: f32, 11: f64, 7: i64, 13: u64, 12: u64 }[dataType] ?? i32;
    data = new Arr(count);
    for (let i = 0; i < count; ++i) data[i] = Arr === BigInt64Array || Arr === BigUint64Array ? BigInt(src[i]) : Number(src[i]);
  }
  if (data.length !== count) fail(`${file}: ${data.length} values for shape [${dims}]`);
  return { type: ortType, dims, data };
}
