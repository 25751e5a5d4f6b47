"""TensorFlow side of the TFRecord interoperability tests.

  tf_interop.py write DIR   tf.io.TFRecordWriter writes plain/gzip/zlib files
  tf_interop.py read DIR    tf.data reads the files fastnn wrote and
                            tf.io.parse_single_example parses them
  tf_interop.py images DIR  tf.io.encode_jpeg writes JPEGs (4:2:0, 4:4:4,
                            progressive, gray), with TensorFlow's decode_jpeg
                            of each and its inception evaluation
                            preprocessing, for fastnn to compare with

Fails, saying so, when TensorFlow is not installed (the test then fails:
scripts/install-deps.sh installs it into the project's .venv).
The record contents follow expected_example(i), mirrored in TfInteropTest.cpp.
"""
import os
import sys

import numpy as np

try:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
except ImportError as e:  # pragma: no cover
    sys.exit(f"TensorFlow is not installed in this Python ({sys.executable}): "
             f"{e}; scripts/install-deps.sh installs it into .venv")

COMPRESSIONS = {"plain": "", "gzip": "GZIP", "zlib": "ZLIB"}
N = 20


def expected_example(i):
    return {
        "bytes": [b"rec%d" % i, b"\x00\xff" * i],
        "int64": [i, -i, 2**40 + i, -(2**63)],
        "float": [i * 0.5, -1.25, 1e-30, 3.4e38],
    }


def make_example(i):
    v = expected_example(i)
    f = {
        "bytes": tf.train.Feature(bytes_list=tf.train.BytesList(value=v["bytes"])),
        "int64": tf.train.Feature(int64_list=tf.train.Int64List(value=v["int64"])),
        "float": tf.train.Feature(float_list=tf.train.FloatList(value=v["float"])),
        "empty": tf.train.Feature(int64_list=tf.train.Int64List(value=[])),
    }
    return tf.train.Example(features=tf.train.Features(feature=f))


def write(d):
    for name, comp in COMPRESSIONS.items():
        opts = tf.io.TFRecordOptions(compression_type=comp)
        with tf.io.TFRecordWriter(os.path.join(d, f"tf-{name}.tfrecord"), opts) as w:
            for i in range(N):
                w.write(make_example(i).SerializeToString())


def check(cond, msg):
    if not cond:
        print("MISMATCH:", msg)
        sys.exit(1)


def read(d):
    spec = {
        "bytes": tf.io.FixedLenFeature([2], tf.string),
        "int64": tf.io.FixedLenFeature([4], tf.int64),
        "float": tf.io.FixedLenFeature([4], tf.float32),
        "empty": tf.io.VarLenFeature(tf.int64),
    }
    for name, comp in COMPRESSIONS.items():
        path = os.path.join(d, f"cpp-{name}.tfrecord")
        ds = tf.data.TFRecordDataset(path, compression_type=comp)
        count = 0
        for i, rec in enumerate(ds):
            p = tf.io.parse_single_example(rec, spec)
            v = expected_example(i)
            check(list(p["bytes"].numpy()) == v["bytes"], f"{path} #{i} bytes")
            check(list(p["int64"].numpy()) == v["int64"], f"{path} #{i} int64")
            want = tf.constant(v["float"], tf.float32).numpy()
            check((p["float"].numpy() == want).all(), f"{path} #{i} float")
            check(p["empty"].values.shape[0] == 0, f"{path} #{i} empty")
            count += 1
        check(count == N, f"{path}: {count} records, expected {N}")

    # Shards written by `fastnn-data convert`: FastNN's schema as the seed's
    # parse_fn declares it.
    schema = {
        "image/encoded": tf.io.FixedLenFeature((), tf.string, default_value=""),
        "image/format": tf.io.FixedLenFeature((), tf.string, default_value="png"),
        "image/class/label": tf.io.FixedLenFeature(
            [], tf.int64, default_value=tf.zeros([], dtype=tf.int64)),
        "image/height": tf.io.FixedLenFeature([], tf.int64),
        "image/width": tf.io.FixedLenFeature([], tf.int64),
    }
    conv = sorted(f for f in os.listdir(d) if f.startswith("conv-"))
    check(conv, "no converted shards")
    total = 0
    for f in conv:
        for rec in tf.data.TFRecordDataset(os.path.join(d, f)):
            p = tf.io.parse_single_example(rec, schema)
            img = tf.io.decode_image(p["image/encoded"], channels=3)
            check(img.shape[0] == p["image/height"].numpy(), f"{f} height")
            check(img.shape[1] == p["image/width"].numpy(), f"{f} width")
            check(0 <= p["image/class/label"].numpy() < 3, f"{f} label")
            check(p["image/format"].numpy() in (b"png", b"jpeg"), f"{f} format")
            total += 1
    print(f"tf read {total} converted records")
    check(total == 12, f"{total} converted records, expected 12")


# name, height, width, channels, tf.io.encode_jpeg options; mirrored in
# TfInteropTest.cpp.
JPEG_CASES = [
    ("420", 75, 101, 3, {}),
    ("444", 64, 48, 3, {"chroma_downsampling": False}),
    ("progressive", 90, 70, 3, {"progressive": True}),
    ("gray", 50, 67, 1, {}),
]
EVAL_SIZE = [40, 56]


def images(d):
    rng = np.random.default_rng(0)
    for name, h, w, c, opts in JPEG_CASES:
        yy, xx = np.mgrid[0:h, 0:w]
        waves = [128 + 90 * np.sin(0.05 * (xx + yy) + k) + 20 * np.sin(0.3 * xx * (k + 1))
                 for k in range(c)]
        img = np.stack(waves, -1) + rng.integers(-16, 16, (h, w, c))
        img = np.clip(img, 0, 255).astype(np.uint8)
        data = tf.io.encode_jpeg(img, quality=90, **opts)
        with open(os.path.join(d, name + ".jpg"), "wb") as f:
            f.write(data.numpy())
        rgb = tf.io.decode_jpeg(data, channels=3, dct_method="INTEGER_ACCURATE")
        with open(os.path.join(d, name + ".rgb"), "wb") as f:
            f.write(rgb.numpy().tobytes())
        # TF-slim's preprocess_for_eval, with TF2's bilinear resize
        # (half-pixel centres), which fastnn follows.
        x = tf.image.convert_image_dtype(rgb, tf.float32)
        x = tf.image.central_crop(x, 0.875)
        x = tf.image.resize(x, EVAL_SIZE, method="bilinear")
        x = (x - 0.5) * 2.0
        with open(os.path.join(d, name + ".eval"), "wb") as f:
            f.write(x.numpy().astype(np.float32).tobytes())


if __name__ == "__main__":
    {"write": write, "read": read, "images": images}[sys.argv[1]](sys.argv[2])
