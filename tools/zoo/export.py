#!/usr/bin/python3
"""Export a FastNN zoo model (TF-slim architecture) to ONNX for training.

Run with Debian's Python, which has torch, torchvision and onnx:
  /usr/bin/python3 tools/zoo/export.py --model lenet -o lenet.onnx
  /usr/bin/python3 tools/zoo/export.py --list
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fastnn_zoo import MODELS  # noqa: E402
from fastnn_zoo.onnx_export import (  # noqa: E402
    MAX_OPSET, MIN_OPSET, ExportError, count_parameters, export_model)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--model", choices=sorted(MODELS), metavar="NAME",
                        help="zoo model to export (see --list)")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="ONNX file to write")
    parser.add_argument("--num-classes", type=int, metavar="N")
    parser.add_argument("--image-size", type=int, metavar="S",
                        help="input height and width in pixels")
    parser.add_argument("--channels", type=int, metavar="C",
                        help="input channels")
    parser.add_argument("--opset", type=int, default=13,
                        help="ONNX opset, %d..%d (default 13)"
                        % (MIN_OPSET, MAX_OPSET))
    parser.add_argument("--seed", type=int, default=0,
                        help="seed for the random initial weights")
    parser.add_argument("--summary-json", metavar="FILE",
                        help="also write the export summary as JSON")
    parser.add_argument("--list", action="store_true",
                        help="list the models with their defaults and "
                        "parameter counts")
    args = parser.parse_args(argv)
    if not args.list and not (args.model and args.output):
        parser.error("--model and -o are required (or use --list)")
    for option in ("num_classes", "image_size", "channels"):
        value = getattr(args, option)
        if value is not None and value < 1:
            parser.error("--%s must be positive" % option.replace("_", "-"))
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.list:
        print("%-20s %10s %11s %8s %12s  %s"
              % ("model", "image_size", "num_classes", "channels",
                 "parameters", "outputs"))
        for name, spec in MODELS.items():
            outputs = "logits,aux_logits" if spec.aux_logits else "logits"
            print("%-20s %10d %11d %8d %12d  %s"
                  % (name, spec.image_size, spec.num_classes, spec.channels,
                     count_parameters(name), outputs))
        return 0
    start = time.time()
    try:
        summary = export_model(args.model, args.output, args.num_classes,
                               args.image_size, args.channels, args.opset,
                               args.seed)
    except ExportError as error:
        print("export.py: %s: %s" % (args.model, error), file=sys.stderr)
        return 1
    summary["export_seconds"] = round(time.time() - start, 2)
    if args.summary_json:
        with open(args.summary_json, "w") as f:
            json.dump(summary, f, indent=2)
            f.write("\n")
    print("%s: input %s %s, outputs %s, %d initializers (%d float), "
          "%d parameters (%d elements), opset %d, %.1fs"
          % (summary["model"], summary["inputs"][0]["name"],
             summary["inputs"][0]["shape"],
             ", ".join("%s %s" % (o["name"], o["shape"])
                       for o in summary["outputs"]),
             summary["initializers"], summary["float_initializers"],
             summary["parameters"], summary["parameter_elements"],
             summary["opset"], summary["export_seconds"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
