"""Keras applications through tf2onnx (issue 21), trained like TensorFlow
trains them.

Builds the Keras model with seeded random weights (10 classes, logits out;
nothing is downloaded) and gives its biases and batch-norm parameters and
statistics seeded random values, as a trained model has them: TensorFlow's
graph optimizer drops additions of all-zero constants, so a freshly
initialised model's biases would not reach the ONNX graph to be trained.
Then converts it with tf2onnx at its default opset, twice:
  - with tf2onnx's default graph optimizers, which fold the batch norms
    into the convolutions (an inference graph): fastnnc must warn, and
    infer.bin must match Keras (training=False) to 1e-4 relative;
  - with `optimizers={}`, the conversion docs/onnx-support.md tells
    TensorFlow users to train from (every batch norm kept, NHWC with
    transposes around each convolution), which must
      * infer like Keras to 1e-4 relative,
      * train like Keras: the losses of the first 5 plain-SGD steps on one
        fixed batch (step runner of test/train, the compiled training step)
        match tf.GradientTape with model(x, training=True) (batch
        statistics) to 1e-3 relative, the updates moving Keras' losses
        away from those of the initial weights by at least 10x that, and
      * overfit in train.bin: 20 momentum-SGD steps on one mock batch, the
        mean of the last 5 losses below 0.8 x the first
        (test/zoo/check_overfit.py).
"""
import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "zoo"))
sys.path.insert(0, str(HERE.parent / "train"))
from check_infer_parity import (  # noqa: E402
    compare, import_warnings, run_infer)
from check_overfit import overfit  # noqa: E402
from step_runner import compile_runner, run_steps  # noqa: E402

BATCH = 2
PARITY_STEPS = 5
TOLERANCE = 1e-3
MIN_UPDATE_EFFECT = 10 * TOLERANCE
OVERFIT_STEPS = 20
# name -> (image size, the parity steps' learning rate, the overfit's).
# Both are ill-conditioned at random initialisation with batch statistics of
# a batch of 2: ResNet50's gradient norm is ~3e3 at 128 x 128 (~8e3 at 64,
# where its float32 gradient is 3% off its own float64 one), so its rate is
# tiny; the losses still move 4%. At 64 x 64 the last stages' batch norms
# see 8 values per channel, and a ReLU6 input within float32 rounding of 0
# (5e-6 seen) switches a gradient path that implementations may round to
# either side, which moves MobileNetV2's step-2 loss by several per cent;
# 128 x 128 keeps such ties from deciding the trajectory. Observed errors:
# at most 4e-5 (ResNet50) and 1e-5 (MobileNetV2).
MODELS = {
    "ResNet50": (128, 6e-9, 0.05),
    "MobileNetV2": (128, 2e-7, 0.05),
    "EfficientNetB0": (128, 3e-6, 0.05),
}
# Seeded uniform ranges of the weights that are zeros or ones when fresh.
RANDOMISED = {"bias": (-0.1, 0.1), "beta": (-0.1, 0.1),
              "gamma": (0.8, 1.2), "moving_mean": (-0.1, 0.1),
              "moving_variance": (0.8, 1.2)}


def build(name, size):
    import tensorflow as tf
    tf.keras.utils.set_random_seed(0)
    model = getattr(tf.keras.applications, name)(
        weights=None, input_shape=(size, size, 3), classes=10,
        classifier_activation=None)
    # Dropout off (EfficientNet's top dropout and drop-connect), so that
    # Keras' training steps are deterministic; the converted inference
    # graph has none.
    for layer in model.layers:
        if isinstance(layer, tf.keras.layers.Dropout):
            layer.rate = 0.0
    rng = np.random.RandomState(1)
    for weight in model.weights:
        kind = weight.name.split("/")[-1].split(":")[0]
        if kind in RANDOMISED:
            weight.assign(rng.uniform(*RANDOMISED[kind], weight.shape)
                          .astype(np.float32))
    return model


def convert(model, size, path, optimizers):
    import tensorflow as tf
    import tf2onnx
    spec = (tf.TensorSpec((BATCH, size, size, 3), tf.float32, name="images"),)
    options = {} if optimizers is None else {"optimizers": optimizers}
    proto, _ = tf2onnx.convert.from_keras(model, input_signature=spec,
                                          output_path=str(path), **options)
    return proto.graph.output[0].name


def keras_losses(model, images, labels, learning_rate):
    """Loss of each plain-SGD step of Keras on the batches, from the
    model's current weights (which it changes)."""
    import tensorflow as tf
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = tf.keras.optimizers.SGD(learning_rate=learning_rate)
    losses = []
    for x, y in zip(images, labels):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        losses.append(float(loss))
    return losses


def check_training(name, model, args, onnx_file, tmp, size, learning_rate):
    """The parity of the first steps with Keras; True when it holds."""
    import tensorflow as tf
    rng = np.random.RandomState(3)
    batch = rng.uniform(-1, 1, (BATCH, size, size, 3)).astype(np.float32)
    target = rng.randint(0, 10, (BATCH,)).astype(np.int64)
    images = np.stack([batch] * PARITY_STEPS)
    labels = np.stack([target] * PARITY_STEPS)
    # The training step reads its images NCHW, as train.bin's loader writes
    # them, whatever layout the ONNX input has (docs/performance.md).
    nchw = images.transpose(0, 1, 4, 2, 3)
    runner, stderr = compile_runner(args.fastnnc, args.linker, args.link_inputs,
                                    onnx_file, tmp, BATCH, 10)
    if runner is None:
        sys.exit(f"FAILED: fastnnc: {stderr.strip()}")
    ours, _ = run_steps(runner, tmp, nchw, labels, learning_rate)

    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    frozen = float(loss_fn(target, model(batch, training=True)))
    reference = keras_losses(model, images, labels, learning_rate)
    moved = max(abs(frozen - loss) / abs(loss) for loss in reference)
    print(f"{name}: the updates move Keras' losses by up to {moved:.2e} "
          f"relative (at least {MIN_UPDATE_EFFECT:.0e} needed)")
    ok = moved >= MIN_UPDATE_EFFECT
    for step, (mine, theirs) in enumerate(zip(ours, reference), 1):
        error = abs(mine - theirs) / abs(theirs)
        ok &= error <= TOLERANCE
        print(f"{name} step {step}: fastnn {mine:.7f} keras {theirs:.7f} "
              f"relative error {error:.2e} (allowed {TOLERANCE:.0e})"
              + ("" if error <= TOLERANCE else " FAIL"))
    return ok


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True, choices=sorted(MODELS))
    parser.add_argument("--fastnnc", required=True)
    parser.add_argument("--linker", required=True)
    parser.add_argument("--link-inputs", required=True, help="comma-separated")
    parser.add_argument("--keep", help="a directory to keep the files in")
    args = parser.parse_args()
    try:
        import tf2onnx  # noqa: F401  (only its presence is checked here)
    except ImportError:
        print("SKIPPED: tf2onnx is not installed (scripts/install-deps.sh)")
        sys.exit(77)

    size, parity_rate, overfit_rate = MODELS[args.model]
    model = build(args.model, size)
    images = np.random.RandomState(2).uniform(
        -1, 1, (BATCH, size, size, 3)).astype(np.float32)
    expected = model(images, training=False).numpy()
    with tempfile.TemporaryDirectory(prefix=f"keras-{args.model}-") as tmp:
        tmp = Path(args.keep or tmp)
        tmp.mkdir(parents=True, exist_ok=True)
        failed = False
        for label, optimizers in [("tf2onnx default", None),
                                  ("tf2onnx optimizers={}", {})]:
            work = tmp / ("folded" if optimizers is None else "training")
            work.mkdir(exist_ok=True)
            onnx_file = work / "model.onnx"
            output = convert(model, size, onnx_file, optimizers)
            warned = "folded in by tf2onnx" in import_warnings(
                args.fastnnc, onnx_file, BATCH)
            if warned != (optimizers is None):
                print(f"{args.model} ({label}): fastnnc "
                      f"{'warned' if warned else 'did not warn'} of folded "
                      "batch norms FAIL")
                failed = True
            [ours] = run_infer(args.fastnnc, onnx_file, work, images,
                               [output], BATCH)
            failed |= compare(f"{args.model} ({label})", output, ours,
                              {"keras": expected})
        work = tmp / "training"
        failed |= not check_training(args.model, model, args,
                                     work / "model.onnx", work, size,
                                     parity_rate)
        if failed:
            sys.exit("FAILED")
        overfit(f"{args.model} (tf2onnx optimizers={{}})", args.fastnnc,
                work / "model.onnx", work, OVERFIT_STEPS,
                learning_rate=overfit_rate, weight_decay=0, batch=BATCH)


if __name__ == "__main__":
    main()
