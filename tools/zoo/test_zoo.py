"""Tests for the zoo exporter: /usr/bin/python3 -m unittest discover tools/zoo

Covers the small models end to end; the large ones take 5-25 s each and
are exercised by exporting them with export.py (see docs/zoo.md).
"""
import hashlib
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import onnx
import torch
from torch import nn

from fastnn_zoo import MODELS
from fastnn_zoo.layers import LRN
from fastnn_zoo.nasnet import FactorizedReduction, NASNET_CONFIGS, _Layers
from fastnn_zoo.onnx_export import (ExportError, count_parameters,
                                    export_model, verify)

EXPORT_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                         "export.py")


def tf_lrn(x, depth_radius, bias, alpha, beta):
    """tf.nn.lrn's definition on an NCHW array."""
    squares = np.square(x)
    channels = x.shape[1]
    out = np.empty_like(x)
    for c in range(channels):
        lo, hi = max(0, c - depth_radius), min(channels, c + depth_radius + 1)
        out[:, c] = x[:, c] / (bias + alpha * squares[:, lo:hi].sum(1)) ** beta
    return out


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class ZooExportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def test_lrn_matches_tensorflow(self):
        x = np.random.RandomState(0).randn(2, 16, 3, 3).astype(np.float32)
        lrn = LRN(depth_radius=4, bias=1.0, alpha=0.001 / 9.0, beta=0.75)
        got = lrn(torch.from_numpy(x)).numpy()
        np.testing.assert_allclose(got, tf_lrn(x, 4, 1.0, 0.001 / 9.0, 0.75),
                                   rtol=1e-5)

    def test_cifarnet_exports_lrn_with_tf_semantics(self):
        export_model("cifarnet", self.path("c.onnx"), num_classes=5)
        graph = onnx.load(self.path("c.onnx")).graph
        lrns = [n for n in graph.node if n.op_type == "LRN"]
        self.assertEqual(len(lrns), 2)
        attrs = {a.name: onnx.helper.get_attribute_value(a)
                 for a in lrns[0].attribute}
        self.assertEqual(attrs["size"], 9)
        self.assertAlmostEqual(attrs["alpha"], 0.001, places=6)
        self.assertEqual(graph.output[0].type.tensor_type.shape.dim[1]
                         .dim_value, 5)

    def test_small_models_export_with_matching_counts(self):
        cases = [("lenet", {}), ("cifarnet", {}),
                 ("mobilenet_v1", {"image_size": 64}),
                 ("resnet_v1_50", {"image_size": 64, "num_classes": 7}),
                 ("inception_v1", {"image_size": 96, "channels": 1})]
        for name, options in cases:
            with self.subTest(model=name):
                summary = export_model(name, self.path(name + ".onnx"),
                                       **options)
                self.assertEqual(summary["float_initializers"],
                                 summary["parameters"]
                                 + 2 * summary["batch_norm_layers"])
                self.assertEqual(summary["initializers"],
                                 summary["float_initializers"])
                self.assertEqual(summary["inputs"][0]["name"], "images")
                self.assertEqual(summary["inputs"][0]["shape"][0], "batch")

    def test_parameter_counts_match_tf_slim_published(self):
        # (model, published count at 1001 classes without aux head, its
        # rounding); docs/zoo.md names each source.
        published = [("mobilenet_v1", 4.24e6, 0.01e6),
                     ("mobilenet_v1_075", 2.59e6, 0.01e6),
                     ("mobilenet_v1_050", 1.34e6, 0.01e6),
                     ("mobilenet_v1_025", 0.47e6, 0.01e6),
                     ("nasnet_mobile", 5.3e6, 0.1e6),
                     ("pnasnet_mobile", 5.1e6, 0.1e6),
                     ("pnasnet_large", 86.1e6, 0.1e6)]
        for name, count, rounding in published:
            with self.subTest(model=name):
                # One more class: a row of the logits layer and its bias.
                logits = MODELS[name].build().logits
                background = logits.weight[0].numel() + 1
                ours = count_parameters(name, aux_head=False) + background
                self.assertLess(abs(ours - count), rounding, ours)

    def test_factorized_reduction_reads_even_then_odd_pixels(self):
        # slim: path 1 takes pixels (0, 2, ...), path 2 pads bottom/right
        # and shifts by one, taking (1, 3, ...) and a zero past an odd edge.
        reduction = FactorizedReduction(_Layers(NASNET_CONFIGS["nasnet_cifar"]),
                                        1, 2, 2)
        with torch.no_grad():
            reduction.path1.weight.fill_(1.0)
            reduction.path2.weight.fill_(1.0)
            reduction.eval()
            x = torch.arange(25.0).reshape(1, 1, 5, 5)
            y = reduction(x) * (1.0 + 1e-5) ** 0.5  # undo BN's epsilon
        np.testing.assert_allclose(y[0, 0].numpy(), x[0, 0, ::2, ::2].numpy(),
                                   rtol=1e-5)
        odd = np.zeros((3, 3), np.float32)
        odd[:2, :2] = x[0, 0, 1::2, 1::2].numpy()
        np.testing.assert_allclose(y[0, 1].numpy(), odd, rtol=1e-5)

    def test_export_is_deterministic_per_seed(self):
        export_model("lenet", self.path("a.onnx"), seed=3)
        export_model("lenet", self.path("b.onnx"), seed=3)
        export_model("lenet", self.path("c.onnx"), seed=4)
        self.assertEqual(sha256(self.path("a.onnx")),
                         sha256(self.path("b.onnx")))
        self.assertNotEqual(sha256(self.path("a.onnx")),
                            sha256(self.path("c.onnx")))

    def test_batch_norm_running_stats_are_initial(self):
        export_model("mobilenet_v1", self.path("m.onnx"), image_size=32)
        for tensor in onnx.load(self.path("m.onnx")).graph.initializer:
            value = onnx.numpy_helper.to_array(tensor)
            if tensor.name.endswith("running_mean"):
                self.assertFalse(value.any(), tensor.name)
            elif tensor.name.endswith("running_var"):
                self.assertTrue((value == 1).all(), tensor.name)

    def test_inference_export_is_rejected(self):
        # PyTorch's default export folds BN into the conv: verify must fail.
        model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4),
                              nn.Flatten(), nn.Linear(4 * 6 * 6, 2))
        model.eval()
        torch.onnx.export(model, torch.zeros(2, 3, 8, 8), self.path("i.onnx"),
                          input_names=["images"], output_names=["logits"],
                          dynamic_axes={"images": {0: "batch"}},
                          opset_version=13)
        with self.assertRaisesRegex(ExportError, "BatchNormalization"):
            verify(onnx.load(self.path("i.onnx")), model, ["logits"])

    def test_unsupported_configurations_fail_clearly(self):
        # Too small for fc6's 7x7 window, and too large to reduce to 1x1.
        with self.assertRaisesRegex(ExportError, "image size 64"):
            export_model("vgg_16", self.path("v.onnx"), image_size=64)
        with self.assertRaisesRegex(ExportError, "image size 288"):
            export_model("vgg_16", self.path("v.onnx"), image_size=288)
        with self.assertRaisesRegex(ExportError, "opset"):
            export_model("lenet", self.path("l.onnx"), opset=10)

    def test_cli_list_and_error_exit(self):
        listing = subprocess.run([sys.executable, EXPORT_PY, "--list"],
                                 check=True, capture_output=True, text=True)
        for name in MODELS:
            self.assertIn(name, listing.stdout)
        failed = subprocess.run([sys.executable, EXPORT_PY, "--model",
                                 "vgg_16", "--image-size", "64", "-o",
                                 self.path("v.onnx")],
                                capture_output=True, text=True)
        self.assertEqual(failed.returncode, 1)
        self.assertEqual(len(failed.stderr.strip().splitlines()), 1)


if __name__ == "__main__":
    unittest.main()
