#!/usr/bin/python3
"""Exports the torch models of kiln's benchmark set as ONNX (opset 17).

    /usr/bin/python3 bench/export_models.py [--out DIR] [--kiln KILN] [--only NAME...]

Run it with Debian's python3: torch and torchvision come from Debian's
python3-torch and python3-torchvision (apt-get install python3-torch
python3-torchvision); a python3 from elsewhere on PATH usually lacks them.
Writes to DIR (default ~/.cache/kiln-bench-models):

  resnet50.onnx                      torchvision, input [1,3,224,224]
  mobilenet_v2.onnx                  torchvision, input [1,3,224,224]
  deeplabv3_mobilenet_v3_large.onnx  torchvision, input [1,3,512,512], output 'out'
  rtmdet_like.onnx                   built here, NHWC input [1,640,640,3], six outputs
  yolo_c2f_like.onnx                 built here, NHWC input [1,640,640,3], three outputs
                                     (an extra, not in the issue's table: Split and Slice)
  seed_nhwc.onnx, seed_nchw.onnx     `kiln example seed --layout nhwc|nchw`

Every model has weights=None (no download) and is built after
torch.manual_seed(0), so the files are the same on every machine with the
same torch. BatchNorm running statistics are randomized (seeded) so the
exported graphs do not hold identity normalizations that would hide errors.
"""
import argparse
import os
import subprocess
import sys

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torchvision
except ImportError as e:  # pragma: no cover - depends on the machine
    sys.exit(f"export_models: {e}: run with /usr/bin/python3 and install python3-torch python3-torchvision")

OPSET = 17
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---- RTMDet-like detector ---------------------------------------------------
# The shape of RTMDet-tiny (mmdet's CSPNeXt backbone, CSPNeXtPAFPN neck,
# RTMDetSepBNHead), written out in plain torch: the model class kiln's
# motivating bug was found in (NHWC input transposed inside the graph,
# nearest 2x Resize in the neck, Concat, several outputs).

class ConvModule(nn.Sequential):
    """Conv (no bias) + BatchNorm + SiLU."""

    def __init__(self, cin, cout, k=1, s=1, groups=1, act=True):
        super().__init__(nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout))
        if act:
            self.append(nn.SiLU())


class DepthwiseSeparable(nn.Sequential):
    """Depthwise kxk ConvModule, then pointwise 1x1 ConvModule."""

    def __init__(self, cin, cout, k=5):
        super().__init__(ConvModule(cin, cin, k, groups=cin), ConvModule(cin, cout, 1))


class CSPNeXtBlock(nn.Module):
    """3x3 conv, depthwise-separable 5x5 conv, residual add when shapes allow."""

    def __init__(self, cin, cout, add=True):
        super().__init__()
        self.conv1 = ConvModule(cin, cout, 3)
        self.conv2 = DepthwiseSeparable(cout, cout, 5)
        self.add = add and cin == cout

    def forward(self, x):
        y = self.conv2(self.conv1(x))
        return x + y if self.add else y


class ChannelAttention(nn.Module):
    """Global average pool, 1x1 conv, Hardsigmoid, scale (as CSPNeXt's CSPLayer)."""

    def __init__(self, c):
        super().__init__()
        self.fc = nn.Conv2d(c, c, 1)
        self.act = nn.Hardsigmoid()

    def forward(self, x):
        return x * self.act(self.fc(F.adaptive_avg_pool2d(x, 1)))


class CSPLayer(nn.Module):
    def __init__(self, cin, cout, n, add=True, attention=False):
        super().__init__()
        mid = cout // 2
        self.main = ConvModule(cin, mid, 1)
        self.short = ConvModule(cin, mid, 1)
        self.blocks = nn.Sequential(*[CSPNeXtBlock(mid, mid, add) for _ in range(n)])
        self.attention = ChannelAttention(2 * mid) if attention else nn.Identity()
        self.final = ConvModule(2 * mid, cout, 1)

    def forward(self, x):
        y = torch.cat([self.blocks(self.main(x)), self.short(x)], dim=1)
        return self.final(self.attention(y))


class SPPF(nn.Module):
    """1x1 conv, three chained 5x5 max pools, Concat, 1x1 conv."""

    def __init__(self, cin, cout):
        super().__init__()
        mid = cin // 2
        self.conv1 = ConvModule(cin, mid, 1)
        self.pool = nn.MaxPool2d(5, 1, 2)
        self.conv2 = ConvModule(4 * mid, cout, 1)

    def forward(self, x):
        x = self.conv1(x)
        p1 = self.pool(x)
        p2 = self.pool(p1)
        return self.conv2(torch.cat([x, p1, p2, self.pool(p2)], dim=1))


class CSPNeXt(nn.Module):
    """Stem and four stages; returns the stride 8, 16 and 32 features."""

    def __init__(self, widths=(24, 48, 96, 192, 384), depth=1):
        super().__init__()
        w = widths
        self.stem = nn.Sequential(ConvModule(3, w[0] // 2, 3, 2), ConvModule(w[0] // 2, w[0] // 2, 3), ConvModule(w[0] // 2, w[0], 3))
        self.stages = nn.ModuleList()
        for i in range(4):
            layers = [ConvModule(w[i], w[i + 1], 3, 2)]
            if i == 3:
                layers.append(SPPF(w[i + 1], w[i + 1]))
            layers.append(CSPLayer(w[i + 1], w[i + 1], depth, add=True, attention=True))
            self.stages.append(nn.Sequential(*layers))

    def forward(self, x):
        x = self.stem(x)
        outs = []
        for i, stage in enumerate(self.stages):
            x = stage(x)
            if i >= 1:
                outs.append(x)
        return outs  # strides 8, 16, 32


class PAFPN(nn.Module):
    """Top-down path (1x1 reduce, nearest 2x upsample, Concat, CSPLayer), then bottom-up (3x3 s2, Concat, CSPLayer)."""

    def __init__(self, cins=(96, 192, 384), cout=96, depth=1):
        super().__init__()
        c3, c4, c5 = cins
        self.reduce5 = ConvModule(c5, c4, 1)
        self.td4 = CSPLayer(2 * c4, c4, depth, add=False)
        self.reduce4 = ConvModule(c4, c3, 1)
        self.td3 = CSPLayer(2 * c3, c3, depth, add=False)
        self.down3 = ConvModule(c3, c3, 3, 2)
        self.bu4 = CSPLayer(2 * c3, c4, depth, add=False)
        self.down4 = ConvModule(c4, c4, 3, 2)
        self.bu5 = CSPLayer(2 * c4, c5, depth, add=False)
        self.out = nn.ModuleList([ConvModule(c, cout, 3) for c in cins])

    def forward(self, feats):
        x3, x4, x5 = feats
        r5 = self.reduce5(x5)
        t4 = self.td4(torch.cat([F.interpolate(r5, scale_factor=2.0, mode="nearest"), x4], dim=1))
        r4 = self.reduce4(t4)
        p3 = self.td3(torch.cat([F.interpolate(r4, scale_factor=2.0, mode="nearest"), x3], dim=1))
        p4 = self.bu4(torch.cat([self.down3(p3), r4], dim=1))
        p5 = self.bu5(torch.cat([self.down4(p4), r5], dim=1))
        return [conv(p) for conv, p in zip(self.out, (p3, p4, p5))]


class Head(nn.Module):
    """Per stride: two 3x3 ConvModules per branch, then 1x1 cls (num_classes) and reg (4) convs."""

    def __init__(self, c=96, num_classes=80, stacked=2):
        super().__init__()
        self.cls_convs = nn.ModuleList([nn.Sequential(*[ConvModule(c, c, 3) for _ in range(stacked)]) for _ in range(3)])
        self.reg_convs = nn.ModuleList([nn.Sequential(*[ConvModule(c, c, 3) for _ in range(stacked)]) for _ in range(3)])
        self.cls_out = nn.ModuleList([nn.Conv2d(c, num_classes, 1) for _ in range(3)])
        self.reg_out = nn.ModuleList([nn.Conv2d(c, 4, 1) for _ in range(3)])

    def forward(self, feats):
        cls = [self.cls_out[i](self.cls_convs[i](f)) for i, f in enumerate(feats)]
        reg = [self.reg_out[i](self.reg_convs[i](f)).exp() for i, f in enumerate(feats)]
        return cls, reg


class RTMDetLike(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = CSPNeXt()
        self.neck = PAFPN()
        self.head = Head()

    def forward(self, x_nhwc):
        x = x_nhwc.permute(0, 3, 1, 2)  # NHWC input, as exported image models take it
        cls, reg = self.head(self.neck(self.backbone(x)))
        return (*cls, *reg)


RTMDET_OUTPUTS = ["cls_s8", "cls_s16", "cls_s32", "reg_s8", "reg_s16", "reg_s32"]


# ---- YOLO-like backbone with C2f blocks -----------------------------------------
# YOLOv5's focus stem (four stride-2 Slices of the image, Concat) and
# YOLOv8's C2f blocks (1x1 conv, Split in halves, bottlenecks with a residual
# after the SiLU on the second half, Concat of every part, 1x1 conv), NHWC
# input transposed inside the graph: the data movement ops (Split, Slice)
# the other models lack, all on channels-last values.

class Bottleneck(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.a = ConvModule(c, c, 3)
        self.b = ConvModule(c, c, 3)

    def forward(self, x):
        return x + self.b(self.a(x))


class C2f(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.half = c // 2
        self.cv1 = ConvModule(c, c, 1)
        self.m = nn.ModuleList(Bottleneck(self.half) for _ in range(n))
        self.cv2 = ConvModule((2 + n) * self.half, c, 1)

    def forward(self, x):
        parts = list(self.cv1(x).split((self.half, self.half), 1))
        for m in self.m:
            parts.append(m(parts[-1]))
        return self.cv2(torch.cat(parts, 1))


class YoloC2fLike(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = ConvModule(12, 16, 3)
        self.s2 = nn.Sequential(ConvModule(16, 32, 3, 2), C2f(32, 1))
        self.s3 = nn.Sequential(ConvModule(32, 64, 3, 2), C2f(64, 2))
        self.s4 = nn.Sequential(ConvModule(64, 128, 3, 2), C2f(128, 2))
        self.s5 = nn.Sequential(ConvModule(128, 256, 3, 2), C2f(256, 1))

    def forward(self, x):
        x = x.permute(0, 3, 1, 2)
        x = torch.cat([x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]], 1)
        p3 = self.s3(self.s2(self.stem(x)))
        p4 = self.s4(p3)
        return p3, p4, self.s5(p4)


# ---- export -------------------------------------------------------------------

class OutOnly(nn.Module):
    """torchvision segmentation models return a dict; export its 'out' tensor."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)["out"]


def randomize_bn(model):
    """Seeded, plausible BatchNorm statistics and affine parameters."""
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_((torch.rand(n, generator=g) - 0.5) * 0.2)
            m.running_var.copy_(0.5 + torch.rand(n, generator=g))
            m.weight.data.copy_(0.5 + torch.rand(n, generator=g))
            m.bias.data.copy_((torch.rand(n, generator=g) - 0.5) * 0.2)


def build(name):
    tv = torchvision.models
    if name == "resnet50":
        return tv.resnet50(weights=None), (1, 3, 224, 224), ["output"]
    if name == "mobilenet_v2":
        return tv.mobilenet_v2(weights=None), (1, 3, 224, 224), ["output"]
    if name == "deeplabv3_mobilenet_v3_large":
        # weights_backbone=None too: its default would download ImageNet weights.
        m = tv.segmentation.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None, aux_loss=False)
        return OutOnly(m), (1, 3, 512, 512), ["out"]
    if name == "rtmdet_like":
        return RTMDetLike(), (1, 640, 640, 3), RTMDET_OUTPUTS
    if name == "yolo_c2f_like":
        return YoloC2fLike(), (1, 640, 640, 3), ["p3", "p4", "p5"]
    raise ValueError(name)


TORCH_MODELS = ["resnet50", "mobilenet_v2", "deeplabv3_mobilenet_v3_large", "rtmdet_like", "yolo_c2f_like"]


def export(name, out_dir):
    torch.manual_seed(0)
    model, shape, outputs = build(name)
    randomize_bn(model)
    model.eval()
    x = torch.rand(shape) * 2 - 1
    path = os.path.join(out_dir, name + ".onnx")
    with torch.no_grad():
        torch.onnx.export(model, x, path, opset_version=OPSET, input_names=["input"], output_names=outputs,
                          do_constant_folding=True)
    import onnx  # python3-onnx, a dependency of python3-torch's exporter

    onnx.checker.check_model(onnx.load(path))
    print(f"wrote {path}: input [{','.join(map(str, shape))}], outputs {', '.join(outputs)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.expanduser("~/.cache/kiln-bench-models"), help="output folder")
    ap.add_argument("--kiln", default=os.environ.get("KILN", os.path.join(ROOT, "build", "kiln")),
                    help="kiln binary for the seed models (default $KILN or build/kiln)")
    ap.add_argument("--only", nargs="+", choices=TORCH_MODELS + ["seed"], help="export only these")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    failed = []
    for name in a.only or TORCH_MODELS + ["seed"]:
        try:
            if name == "seed":
                for layout in ("nhwc", "nchw"):
                    subprocess.run([a.kiln, "example", "seed", "--layout", layout, "-o",
                                    os.path.join(a.out, f"seed_{layout}.onnx")], check=True)
            else:
                export(name, a.out)
        except Exception as e:  # keep going: report every model that failed
            print(f"export_models: {name} failed: {type(e).__name__}: {e}", file=sys.stderr)
            failed.append(name)
    if failed:
        sys.exit(f"export_models: failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
