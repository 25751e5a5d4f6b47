"""Export a zoo model to ONNX for training, and verify the result.

PyTorch's default (inference) export folds batch norm into convolutions and
ties equal initializers through Identity nodes; a trainer reading such a file
would train the wrong parameters.  export_model() therefore exports in
training mode without constant folding and then checks the file structurally
against the PyTorch module, raising ExportError on any mismatch.
"""
import collections
import contextlib
import os
import warnings

import onnx
from onnx import numpy_helper
import torch
from torch import nn

from . import MODELS

MIN_OPSET, MAX_OPSET = 11, 17

# Training-mode batch norm needs more than one value per channel, and
# inception_v3's 1x1 maps would have exactly one at batch 1.
EXPORT_BATCH = 2

_BN_TYPES = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)
_FLOAT_TYPES = {onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE,
                onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16}


class ExportError(RuntimeError):
    """The model could not be exported, or the export failed verification."""


def build_model(name, num_classes=None, image_size=None, channels=None,
                seed=0):
    """Builds a zoo model with deterministic (seeded) initial weights."""
    if name not in MODELS:
        raise ExportError("unknown model '%s' (known: %s)"
                          % (name, ", ".join(MODELS)))
    spec = MODELS[name]
    config = {
        "num_classes": num_classes or spec.num_classes,
        "image_size": image_size or spec.image_size,
        "channels": channels or spec.channels,
    }
    torch.manual_seed(seed)
    try:
        model = spec.build(num_classes=config["num_classes"],
                           image_size=config["image_size"],
                           in_channels=config["channels"])
    except (ValueError, RuntimeError) as error:
        raise ExportError("cannot be built with %s: %s"
                          % (config, error)) from error
    return model, config


@contextlib.contextmanager
def _initializers_disabled():
    """Makes torch.nn.init's in-place initializers no-ops: counting needs
    only the shapes, and filling 100M+ weights takes seconds per model."""
    names = [n for n in dir(nn.init) if n.endswith("_") and not n.startswith("_")]
    saved = {n: getattr(nn.init, n) for n in names}
    for n in names:
        setattr(nn.init, n, lambda tensor, *args, **kwargs: tensor)
    try:
        yield
    finally:
        for n, function in saved.items():
            setattr(nn.init, n, function)


def count_parameters(name, aux_head=True):
    """Trainable parameter elements of a zoo model at its defaults (the
    count TF-slim's variables have, up to the deviations in docs/zoo.md),
    with or without its aux head (modules named aux_logits)."""
    with _initializers_disabled():
        model, _ = build_model(name)
    return sum(p.numel() for n, p in model.named_parameters()
               if aux_head or not n.startswith("aux_logits."))


def output_names(name):
    return ["logits", "aux_logits"] if MODELS[name].aux_logits else ["logits"]


def _expected_initializers(model):
    """Names of the float tensors a training export must carry: every
    parameter plus each batch norm's running mean and variance (not the
    integer num_batches_tracked, which the trainer does not need)."""
    names = [name for name, _ in model.named_parameters()]
    for module_name, module in model.named_modules():
        if isinstance(module, _BN_TYPES):
            prefix = module_name + "." if module_name else ""
            names += [prefix + "running_mean", prefix + "running_var"]
    return names


def _check_outputs(model, config, outputs):
    """A forward pass in training mode, so shape errors (e.g. an image size
    the architecture cannot take) are reported before exporting."""
    images = torch.zeros(EXPORT_BATCH, config["channels"],
                         config["image_size"], config["image_size"])
    try:
        with torch.no_grad():
            result = model(images)
    except RuntimeError as error:
        raise ExportError("image size %d does not fit the architecture "
                          "(forward pass failed: %s)"
                          % (config["image_size"], error)) from error
    result = result if isinstance(result, tuple) else (result,)
    want = (EXPORT_BATCH, config["num_classes"])
    if len(result) != len(outputs):
        raise ExportError("model returns %d outputs, expected %s"
                          % (len(result), outputs))
    for output_name, tensor in zip(outputs, result):
        if tuple(tensor.shape) != want:
            raise ExportError(
                "output '%s' has shape %s, expected %s at image size %d: the "
                "architecture does not reduce this image size to 1x1"
                % (output_name, tuple(tensor.shape), want,
                   config["image_size"]))


def _restore_initial_state(onnx_model, state):
    """Tracing runs training-mode forward passes that move the batch-norm
    running statistics; put the freshly initialised values back so the file
    holds the seeded initial state (mean 0, variance 1)."""
    for tensor in onnx_model.graph.initializer:
        if tensor.name in state:
            value = state[tensor.name].numpy()
            tensor.CopyFrom(numpy_helper.from_array(value, tensor.name))


def verify(onnx_model, model, outputs):
    """Raises ExportError unless the ONNX graph is a faithful training export
    of `model`: checker passes, each float initializer is exactly one distinct
    parameter or running statistic, batch norms and dropouts are all there,
    and nothing is tied or folded."""
    try:
        onnx.checker.check_model(onnx_model)
    except onnx.checker.ValidationError as error:
        raise ExportError("onnx checker: %s" % error) from error
    graph = onnx_model.graph
    problems = []

    names = [t.name for t in graph.initializer]
    duplicates = [n for n, c in collections.Counter(names).items() if c > 1]
    if duplicates:
        problems.append("duplicate initializer names: %s" % duplicates[:5])
    float_names = {t.name for t in graph.initializer
                   if t.data_type in _FLOAT_TYPES}
    expected = set(_expected_initializers(model))
    if float_names - expected:
        problems.append("float initializers that are no parameter or "
                        "running statistic: %s"
                        % sorted(float_names - expected)[:5])
    if expected - float_names:
        problems.append("parameters/running statistics missing from the "
                        "initializers (folded or tied?): %s"
                        % sorted(expected - float_names)[:5])
    if any(n.endswith("num_batches_tracked") for n in names):
        problems.append("num_batches_tracked buffers exported")

    # An Identity of an initializer is how the exporter ties parameters;
    # every initializer must feed real computation directly.
    initializers = set(names)
    direct_uses = collections.Counter()
    for node in graph.node:
        for name in node.input:
            if name in initializers:
                if node.op_type == "Identity":
                    problems.append("initializer '%s' passes through "
                                    "Identity node '%s'" % (name, node.name))
                else:
                    direct_uses[name] += 1
    unused = sorted(float_names - set(direct_uses))
    if unused:
        problems.append("float initializers not used by any node: %s"
                        % unused[:5])

    op_counts = collections.Counter(node.op_type for node in graph.node)
    bn_layers = sum(isinstance(m, _BN_TYPES) for m in model.modules())
    if op_counts["BatchNormalization"] != bn_layers:
        problems.append("%d BatchNormalization nodes for %d batch-norm layers"
                        % (op_counts["BatchNormalization"], bn_layers))
    dropouts = sum(isinstance(m, nn.Dropout) for m in model.modules())
    if op_counts["Dropout"] != dropouts:
        problems.append("%d Dropout nodes for %d dropout layers"
                        % (op_counts["Dropout"], dropouts))
    if op_counts["Conv"] and any(
            node.op_type == "Conv" and len(node.input) == 3
            and node.input[2] not in initializers for node in graph.node):
        problems.append("a Conv bias is computed, not a parameter "
                        "(batch norm folded?)")

    graph_inputs = [i.name for i in graph.input if i.name not in initializers]
    if graph_inputs != ["images"]:
        problems.append("graph inputs %s, expected ['images']" % graph_inputs)
    graph_outputs = [o.name for o in graph.output]
    if graph_outputs != outputs:
        problems.append("graph outputs %s, expected %s"
                        % (graph_outputs, outputs))
    batch_dim = graph.input[0].type.tensor_type.shape.dim[0]
    if batch_dim.dim_param != "batch":
        problems.append("input batch axis is not dynamic")
    if problems:
        raise ExportError("export verification failed:\n  "
                          + "\n  ".join(problems))


def _shape(value_info):
    return [d.dim_param or d.dim_value
            for d in value_info.type.tensor_type.shape.dim]


def summarize(name, onnx_model, model):
    graph = onnx_model.graph
    float_count = sum(t.data_type in _FLOAT_TYPES for t in graph.initializer)
    return {
        "model": name,
        "inputs": [{"name": i.name, "shape": _shape(i)} for i in graph.input],
        "outputs": [{"name": o.name, "shape": _shape(o)}
                    for o in graph.output],
        "initializers": len(graph.initializer),
        "float_initializers": float_count,
        "parameters": len(list(model.parameters())),
        "parameter_elements": sum(p.numel() for p in model.parameters()),
        "batch_norm_layers": sum(isinstance(m, _BN_TYPES)
                                 for m in model.modules()),
        "opset": onnx_model.opset_import[0].version,
        "op_types": sorted({node.op_type for node in graph.node}),
    }


def export_model(name, path, num_classes=None, image_size=None,
                 channels=None, opset=13, seed=0):
    """Exports zoo model `name` to `path`, verifies it, returns a summary."""
    if not MIN_OPSET <= opset <= MAX_OPSET:
        raise ExportError("opset %d not supported (use %d..%d)"
                          % (opset, MIN_OPSET, MAX_OPSET))
    model, config = build_model(name, num_classes, image_size, channels, seed)
    # num_batches_tracked only matters for BN with momentum=None (cumulative
    # averages); without the buffer the exporter has no integer state to
    # drop and no mutation to warn about.
    for module in model.modules():
        if isinstance(module, _BN_TYPES):
            module.num_batches_tracked = None
    initial_state = {k: v.detach().clone()
                     for k, v in model.state_dict().items()}
    outputs = output_names(name)
    model.train()
    _check_outputs(model, config, outputs)

    images = torch.zeros(EXPORT_BATCH, config["channels"],
                         config["image_size"], config["image_size"])
    with warnings.catch_warnings():
        # torch 1.13 flags every g.op() in a custom symbolic (our LRN) as
        # deprecated; that is its own API and works in this version.
        warnings.filterwarnings("ignore", category=FutureWarning,
                                message=".*_graph_op.*")
        torch.onnx.export(
            model, images, path,
            input_names=["images"], output_names=outputs,
            dynamic_axes={n: {0: "batch"} for n in ["images"] + outputs},
            opset_version=opset,
            training=torch.onnx.TrainingMode.TRAINING,
            do_constant_folding=False)

    onnx_model = onnx.load(path)
    _restore_initial_state(onnx_model, initial_state)
    try:
        verify(onnx_model, model, outputs)
    except ExportError:
        os.remove(path)  # never leave a file a trainer would misread
        raise
    onnx.save(onnx_model, path)
    return summarize(name, onnx_model, model)
