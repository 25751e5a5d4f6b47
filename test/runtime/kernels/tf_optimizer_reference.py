"""Expected optimizer updates for OptimizerTest.cpp, from TensorFlow itself.

usage: tf_optimizer_reference.py CASES OUT_DIR

CASES has one optimizer case per line, written by the test:
    name kind key=value ...
with the keys of fnn_optimizer_desc. This script writes into OUT_DIR:
    param.npy   (N,)      initial weights
    grads.npy   (5, N)    the gradient of each step
    lrs.npy     (5,)      the learning rate of each step
    NAME.npy    (5, 3, N) var, slot0, slot1 after each step (zeros for slots
                          the kind does not have)
using tf.compat.v1.train's optimizers, and for kind adamw a numpy transcription
of BERT's AdamWeightDecayOptimizer (google-research/bert optimization.py).

It also writes the ONNX backend test cases of the training ops
(test_momentum, test_nesterov_momentum, test_adagrad, test_adam and their
_multiple variants), generated here by the onnx package's own case
generators, to OUT_DIR/onnx/TEST/{input_I,output_I}.npy plus attrs.txt (one
`name value` line per node attribute).

Fails, saying which, when TensorFlow or onnx cannot be imported.
"""

import os
import sys

import numpy as np

STEPS = 5
N = 1037  # not a multiple of any vector width


def data():
    rng = np.random.default_rng(20240611)
    param = rng.uniform(-1, 1, N).astype(np.float32)
    grads = rng.normal(0, 0.5, (STEPS, N)).astype(np.float32)
    lrs = np.array([0.05, 0.04, 0.06, 0.03, 0.05], np.float32)
    return param, grads, lrs


def make_optimizer(tf, kind, h, lr):
    t = tf.compat.v1.train
    if kind == "sgd":
        return t.GradientDescentOptimizer(lr), []
    if kind == "momentum":
        return (t.MomentumOptimizer(lr, h["momentum"],
                                    use_nesterov=bool(h["use_nesterov"])),
                ["momentum"])
    if kind == "rmsprop":
        return (t.RMSPropOptimizer(lr, decay=h["decay"], momentum=h["momentum"],
                                   epsilon=h["epsilon"]), ["rms", "momentum"])
    if kind == "adam":
        return (t.AdamOptimizer(lr, h["beta1"], h["beta2"], h["epsilon"]),
                ["m", "v"])
    if kind == "adagrad":
        return (t.AdagradOptimizer(
            lr, initial_accumulator_value=h["initial_accumulator_value"]),
                ["accumulator"])
    if kind == "adadelta":
        return (t.AdadeltaOptimizer(lr, rho=h["rho"], epsilon=h["epsilon"]),
                ["accum", "accum_update"])
    if kind == "ftrl":
        return (t.FtrlOptimizer(
            lr, learning_rate_power=h["learning_rate_power"],
            initial_accumulator_value=h["initial_accumulator_value"],
            l1_regularization_strength=h["l1"],
            l2_regularization_strength=h["l2"]), ["accum", "linear"])
    raise ValueError("unknown kind " + kind)


def run_tf(tf, kind, h, param, grads, lrs):
    out = np.zeros((STEPS, 3, N), np.float32)
    graph = tf.Graph()
    with graph.as_default():
        var = tf.compat.v1.Variable(param)
        grad = tf.compat.v1.placeholder(tf.float32, [N])
        lr = tf.compat.v1.placeholder(tf.float32, [])
        opt, slot_names = make_optimizer(tf, kind, h, lr)
        train = opt.apply_gradients([(grad, var)])
        slots = [opt.get_slot(var, s) for s in slot_names]
        with tf.compat.v1.Session(graph=graph) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            for k in range(STEPS):
                sess.run(train, {grad: grads[k], lr: lrs[k]})
                values = sess.run([var] + slots)
                for i, v in enumerate(values):
                    out[k, i] = v
    return out


def run_bert_adamw(h, param, grads, lrs):
    """BERT's AdamWeightDecayOptimizer.apply_gradients, in float32 as BERT's
    graph computes it: no bias correction, decay added to the update."""
    f = np.float32
    beta1, beta2, eps, decay = (f(h["beta1"]), f(h["beta2"]), f(h["epsilon"]),
                                f(h["weight_decay_rate"]))
    p = param.copy()
    m = np.zeros(N, np.float32)
    v = np.zeros(N, np.float32)
    out = np.zeros((STEPS, 3, N), np.float32)
    for k in range(STEPS):
        g = grads[k]
        m = beta1 * m + (f(1) - beta1) * g
        v = beta2 * v + (f(1) - beta2) * np.square(g)
        update = m / (np.sqrt(v) + eps)
        update += decay * p
        p = p - lrs[k] * update
        out[k] = [p, m, v]
    return out


ONNX_CASES = ["test_momentum", "test_momentum_multiple",
              "test_nesterov_momentum", "test_adagrad",
              "test_adagrad_multiple", "test_adam", "test_adam_multiple"]


def write_onnx_cases(out_dir):
    # onnx 1.12's generators still use numpy aliases that numpy 1.24 removed
    # (as in test/onnx-backend/generate_node_tests.py).
    for alias, value in (("float", float), ("int", int), ("bool", bool),
                         ("object", object)):
        if not hasattr(np, alias):
            setattr(np, alias, value)
    import onnx
    from onnx.backend.test.case import node as node_cases
    cases = {c.name: c for c in node_cases.collect_testcases(None)
             if c.name in ONNX_CASES}
    missing = sorted(set(ONNX_CASES) - set(cases))
    if missing:
        raise SystemExit(f"onnx {onnx.__version__} has no test cases "
                         f"{', '.join(missing)}")
    for name, case in cases.items():
        dst = os.path.join(out_dir, "onnx", name)
        os.makedirs(dst)
        node = case.model.graph.node[0]
        with open(os.path.join(dst, "attrs.txt"), "w") as f:
            for a in node.attribute:
                value = onnx.helper.get_attribute_value(a)
                if isinstance(value, bytes):
                    value = value.decode()
                f.write(f"{a.name} {value}\n")
        inputs, outputs = case.data_sets[0]
        for i, array in enumerate(inputs):
            np.save(os.path.join(dst, f"input_{i}.npy"), np.asarray(array))
        for i, array in enumerate(outputs):
            np.save(os.path.join(dst, f"output_{i}.npy"), np.asarray(array))


def main():
    cases_path, out_dir = sys.argv[1], sys.argv[2]
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        import tensorflow as tf
    except ImportError as e:
        raise SystemExit(f"{sys.executable} has no TensorFlow ({e}); "
                         "scripts/install-deps.sh installs it into .venv")
    param, grads, lrs = data()
    np.save(os.path.join(out_dir, "param.npy"), param)
    np.save(os.path.join(out_dir, "grads.npy"), grads)
    np.save(os.path.join(out_dir, "lrs.npy"), lrs)
    with open(cases_path) as f:
        for line in f:
            name, kind, *pairs = line.split()
            h = {k: float(v) for k, v in (p.split("=") for p in pairs)}
            if kind == "adamw":
                out = run_bert_adamw(h, param, grads, lrs)
            else:
                out = run_tf(tf, kind, h, param, grads, lrs)
            np.save(os.path.join(out_dir, name + ".npy"), out)
    write_onnx_cases(out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
