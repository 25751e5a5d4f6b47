"""The benchmarks' peers, each measured in a process of its own.

Run with a peer's virtual environment (scripts/install-peers.sh), through
benchlib.run_peer, which also takes the process's peak RSS:
  .venv-torch2/bin/python bench/peers.py torch-train MODEL BATCH STEPS
      THREADS {eager,compile} {fp32,bf16}
  .venv-torch2/bin/python bench/peers.py ort-infer ONNX BATCH RUNS THREADS
  .venv-ort-training/bin/python bench/peers.py ort-artifacts ONNX DIR
  .venv-ort-training/bin/python bench/peers.py ort-train ONNX DIR BATCH
      STEPS THREADS
  .venv-torch2/bin/python bench/peers.py gemm-peak THREADS {fp32,bf16}
  VENV/bin/python bench/peers.py versions
Each prints one `key=value` result line on stdout.
"""
import os
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
WARMUP_STEPS = 2
LEARNING_RATE = 0.001
# The names tools/zoo/export.py gives the graph's input and outputs.
IMAGES, LOGITS = "images", "logits"
# TF-slim's weight of the auxiliary head's loss (fastnn's build-train-step).
AUX_LOSS_WEIGHT = 0.4


def torch_train(name, batch_size, steps, threads, mode, precision):
    """Forward, cross-entropy (+0.4 x the aux head's), backward and a
    momentum SGD step on a fixed random batch, as train.bin does."""
    import torch
    import torch.nn.functional as F
    sys.path.insert(0, os.path.join(ROOT, "tools", "zoo"))
    from fastnn_zoo.onnx_export import build_model

    torch.set_num_threads(threads)
    model, config = build_model(name, seed=0)
    model.train()
    size = config["image_size"]
    images = torch.rand(batch_size, config["channels"], size, size) * 2 - 1
    labels = torch.randint(0, config["num_classes"], (batch_size,))
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE,
                                momentum=0.9)
    forward = torch.compile(model) if mode == "compile" else model

    def step():
        with torch.autocast("cpu", dtype=torch.bfloat16,
                            enabled=precision == "bf16"):
            output = forward(images)
            if isinstance(output, tuple):
                loss = F.cross_entropy(output[0], labels) + \
                    AUX_LOSS_WEIGHT * F.cross_entropy(output[1], labels)
            else:
                loss = F.cross_entropy(output, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    for _ in range(WARMUP_STEPS):  # torch.compile compiles here
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    print("images/s=%.3f" % (steps * batch_size /
                             (time.perf_counter() - start)))


def inference_graph(model):
    """The training export as an inference graph, what `fastnnc
    --mode=infer` makes of it: batch norm without its running-statistic
    outputs (so it normalizes with them), dropout without its training
    flag (so it passes values through)."""
    for node in model.graph.node:
        if node.op_type == "BatchNormalization":
            del node.output[1:]
        elif node.op_type == "Dropout":
            del node.input[1:]
            del node.output[1:]
    return model


def session_options(threads):
    import onnxruntime
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = \
        onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    return options


def image_shape(model):
    dims = model.graph.input[0].type.tensor_type.shape.dim
    return [d.dim_value for d in dims[1:]]


def ort_infer(onnx_file, batch_size, runs, threads):
    import numpy
    import onnx
    import onnxruntime
    model = inference_graph(onnx.load(onnx_file))
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), session_options(threads),
        providers=["CPUExecutionProvider"])
    images = (numpy.random.rand(batch_size, *image_shape(model)) * 2 - 1) \
        .astype(numpy.float32)
    session.run([LOGITS], {IMAGES: images})  # warm-up, as infer.bin does
    start = time.perf_counter()
    for _ in range(runs):
        session.run([LOGITS], {IMAGES: images})
    print("ms/run=%.4f" % ((time.perf_counter() - start) * 1e3 / runs))


def ort_artifacts(onnx_file, directory):
    """ORT Training's training, eval and optimizer models and checkpoint:
    every float initializer but batch norm's running statistics trained,
    cross-entropy on the logits (+0.4 x the aux head's), plain SGD (the
    training API offers SGD without momentum and AdamW only)."""
    import onnx
    import onnxruntime
    from onnxruntime.training import artifacts, onnxblock
    onnxruntime.set_default_logger_severity(3)  # its per-pass info lines

    class AuxLoss(onnxblock.Block):
        """loss(logits) + 0.4 x loss(aux_logits). The weight is a rank-0
        initializer: with onnxblock's Constant (shape [1]) the gradient
        builder fails on the Add's broadcast ("axis must be in [-rank,
        rank-1]. input rank was 0")."""

        def __init__(self):
            super().__init__()
            self.loss = onnxblock.loss.CrossEntropyLoss()
            self.aux_loss = onnxblock.loss.CrossEntropyLoss()
            self.mul = onnxblock.blocks.Mul()
            self.add = onnxblock.blocks.Add()

        def build(self, logits, aux_logits):
            weight = "aux_loss_weight"
            self.base.graph.initializer.append(onnx.helper.make_tensor(
                weight, onnx.TensorProto.FLOAT, [], [AUX_LOSS_WEIGHT]))
            return self.add(self.loss(logits),
                            self.mul(weight, self.aux_loss(aux_logits)))

    model = onnx.load(onnx_file)
    floats = [i.name for i in model.graph.initializer
              if i.data_type == onnx.TensorProto.FLOAT]
    statistics = tuple(n for n in floats
                       if n.endswith(("running_mean", "running_var")))
    aux = len(model.graph.output) > 1
    os.makedirs(directory, exist_ok=True)
    artifacts.generate_artifacts(
        model, requires_grad=[n for n in floats if n not in statistics],
        frozen_params=list(statistics),
        loss=AuxLoss() if aux else artifacts.LossType.CrossEntropyLoss,
        optimizer=artifacts.OptimType.SGD, artifact_directory=directory)
    print("artifacts=%s" % directory)


def ort_train(onnx_file, directory, batch_size, steps, threads):
    """ONNX Runtime Training on ort_artifacts' DIR for the model ONNX."""
    import numpy
    import onnx
    import onnxruntime
    from onnxruntime.training import api
    onnxruntime.set_default_logger_severity(3)
    state = api.CheckpointState.load_checkpoint(
        os.path.join(directory, "checkpoint"))
    module = api.Module(os.path.join(directory, "training_model.onnx"), state,
                        os.path.join(directory, "eval_model.onnx"),
                        device="cpu", session_options=session_options(threads))
    optimizer = api.Optimizer(os.path.join(directory, "optimizer_model.onnx"),
                              module)
    optimizer.set_learning_rate(LEARNING_RATE)
    module.train()
    model = onnx.load(onnx_file, load_external_data=False)
    logits = next(o for o in model.graph.output if o.name == LOGITS)
    classes = logits.type.tensor_type.shape.dim[-1].dim_value
    images = (numpy.random.rand(batch_size, *image_shape(model)) * 2 - 1) \
        .astype(numpy.float32)
    labels = numpy.random.randint(0, classes, batch_size).astype(numpy.int64)

    def step():
        module(images, labels)
        optimizer.step()
        module.lazy_reset_grad()

    for _ in range(WARMUP_STEPS):
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    print("images/s=%.3f" % (steps * batch_size /
                             (time.perf_counter() - start)))


def gemm_peak(threads, precision):
    """The best 2048^2 matrix-product GFLOP/s of PyTorch 2's CPU kernels,
    torch.mm (MKL for fp32, oneDNN for bf16) or oneDNN 3.13's linear
    (twice MKL's fp32 on AMD's CPUs) where it has a kernel: the ceiling
    the training rows are set against."""
    import torch
    torch.set_num_threads(threads)
    dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    a = torch.rand(2048, 2048).to(dtype)
    b = torch.rand(2048, 2048).to(dtype)
    best = 0.0
    for product in (lambda: torch.mm(a, b),
                    lambda: torch.ops.mkldnn._linear_pointwise(
                        a, b, None, "none", [], "")):
        # oneDNN has no bf16 linear on a CPU without AVX-512 (AVX2 EPYC):
        # then torch.mm's is the peak.
        try:
            product()
        except RuntimeError:
            continue
        for _ in range(5):
            start = time.perf_counter()
            product()
            best = max(best, 2 * 2048 ** 3 /
                       (time.perf_counter() - start) / 1e9)
    print("gflops=%.1f" % best)


def versions():
    """One line naming this environment's peers and their CPU libraries."""
    parts = []
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        config = torch.__config__.show()
        libraries = [line.strip(" -") for line in config.splitlines()
                     if "Math Kernel Library" in line or "MKL-DNN" in line
                     or "CPU capability" in line]
        parts.append("PyTorch %s (%s)" % (torch.__version__,
                                          "; ".join(libraries)))
    import onnxruntime
    package = "onnxruntime-training" if hasattr(onnxruntime, "training") \
        or os.path.isdir(os.path.join(os.path.dirname(onnxruntime.__file__),
                                      "training")) else "onnxruntime"
    parts.append("%s %s (CPU execution provider, its own MLAS kernels)"
                 % (package, onnxruntime.__version__))
    print("versions=" + ", ".join(parts))


def main():
    command, args = sys.argv[1], sys.argv[2:]
    if command == "torch-train":
        torch_train(args[0], int(args[1]), int(args[2]), int(args[3]),
                    args[4], args[5])
    elif command == "ort-infer":
        ort_infer(args[0], int(args[1]), int(args[2]), int(args[3]))
    elif command == "ort-artifacts":
        ort_artifacts(args[0], args[1])
    elif command == "ort-train":
        ort_train(args[0], args[1], int(args[2]), int(args[3]), int(args[4]))
    elif command == "gemm-peak":
        gemm_peak(int(args[0]), args[1])
    elif command == "versions":
        versions()
    else:
        raise SystemExit("peers.py: unknown command %s" % command)


if __name__ == "__main__":
    main()
