#!/usr/bin/python3
"""Corrected expected outputs for the ONNX 1.12 backend tests whose data is wrong.

Run with Debian's interpreter (/usr/bin/python3: python3-onnx, python3-numpy).
Writes tests/conformance/errata/<suite>/<test>/test_data_set_0/output_<j>.pb,
which `kiln conformance` checks a listed erratum test against (and says so) when
the installed data disagrees. The values come from numpy, following the spec
text, never from kiln:

- Cast/CastLike float -> bfloat16 (opset 13/15): ONNX 1.12 made its data by
  truncation; onnx/onnx#4193 (ONNX 1.13) regenerated it rounding to nearest
  even, which Cast-19 then wrote into the spec. NaN stays a quiet NaN.
- Adam (ai.onnx.preview.training 1): the generator used epsilon=0.01 but left
  the attribute off the node, so the model means the default epsilon 1e-6.
"""
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

SUITE = "/usr/share/libonnx-testdata/data"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "conformance", "errata")


def read(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def write(test, j, array, name, data_type=None):
    d = os.path.join(OUT, "node", test, "test_data_set_0")
    os.makedirs(d, exist_ok=True)
    if data_type is None:
        t = numpy_helper.from_array(array, name)
    else:  # bfloat16: raw uint16 bits, typed as the model declares
        t = onnx.TensorProto()
        t.name = name
        t.data_type = data_type
        t.dims.extend(array.shape)
        t.raw_data = array.astype("<u2").tobytes()
    with open(os.path.join(d, "output_%d.pb" % j), "wb") as f:
        f.write(t.SerializeToString())


def bfloat16_rne(x):
    """float32 -> bfloat16 bits, round to nearest even; NaN -> 0x7FC0 (sign kept)."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    nan = np.isnan(x)
    rounded[nan] = ((u[nan] >> 16) & 0x8000) | 0x7FC0
    return rounded.astype(np.uint16)


def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def adam(node, inputs):
    a = attrs(node)
    alpha, beta = a.get("alpha", 0.9), a.get("beta", 0.999)
    eps = a.get("epsilon", 1e-6)
    norm, norm_post = a.get("norm_coefficient", 0.0), a.get("norm_coefficient_post", 0.0)
    r, t = float(inputs[0]), int(inputs[1])
    n = (len(inputs) - 2) // 4
    xs, gs, vs, hs = (inputs[2 + k * n : 2 + (k + 1) * n] for k in range(4))
    r_adj = r * np.sqrt(1 - beta**t) / (1 - alpha**t) if t > 0 else r
    x_new, v_new, h_new = [], [], []
    for x, g, v, h in zip(xs, gs, vs, hs):
        x, g, v, h = (np.asarray(e, np.float64) for e in (x, g, v, h))
        g_reg = norm * x + g
        v2 = alpha * v + (1 - alpha) * g_reg
        h2 = beta * h + (1 - beta) * g_reg * g_reg
        x2 = (1 - norm_post) * (x - r_adj * v2 / (np.sqrt(h2) + eps))
        x_new.append(x2), v_new.append(v2), h_new.append(h2)
    return [e.astype(np.float32) for e in x_new + v_new + h_new]


def main():
    for test in ("test_cast_FLOAT_to_BFLOAT16", "test_castlike_FLOAT_to_BFLOAT16", "test_castlike_FLOAT_to_BFLOAT16_expanded"):
        m = onnx.load(os.path.join(SUITE, "node", test, "model.onnx"))
        x = read(os.path.join(SUITE, "node", test, "test_data_set_0", "input_0.pb"))
        write(test, 0, bfloat16_rne(x), m.graph.output[0].name, onnx.TensorProto.BFLOAT16)
    test = "test_adam_multiple"
    m = onnx.load(os.path.join(SUITE, "node", test, "model.onnx"))
    inputs = [read(os.path.join(SUITE, "node", test, "test_data_set_0", "input_%d.pb" % i)) for i in range(len(m.graph.input))]
    for j, y in enumerate(adam(m.graph.node[0], inputs)):
        write(test, j, y, m.graph.output[j].name)
    print("wrote", os.path.normpath(OUT))


if __name__ == "__main__":
    sys.exit(main())
