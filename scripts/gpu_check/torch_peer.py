"""PyTorch's best on the GPU, for scripts/gpu-check.sh's throughput row.

Trains the zoo's own module (tools/zoo/fastnn_zoo, the very network
fastnnc compiles from its ONNX export) on one random batch with momentum
SGD, as train.bin's mock-data run does, in the configuration PyTorch users
pick for speed: channels_last, bf16 autocast (for --precision bf16),
torch.compile (falling back to eager, and saying so, if it fails). TF32
stays off for float32, as in fastnn's float32 kernels. Prints one line:

    torch: model=M precision=P batch=B mode=compile|eager images_per_second=R
"""
import argparse
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tools", "zoo"))
from fastnn_zoo.onnx_export import build_model  # noqa: E402


def train_step(model, optimizer, images, labels, precision):
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(images.device.type, dtype=torch.bfloat16,
                        enabled=precision == "bf16"):
        outputs = model(images)
        logits = outputs[0] if isinstance(outputs, tuple) else outputs
        loss = F.cross_entropy(logits.float(), labels)
    loss.backward()
    optimizer.step()
    return loss


def synchronize(device):
    if device == "cuda":
        torch.cuda.synchronize()


def measure(model, step, images, labels, precision, warmup, steps):
    for _ in range(warmup):
        step(model, images, labels, precision)
    synchronize(images.device.type)
    start = time.perf_counter()
    for _ in range(steps):
        step(model, images, labels, precision)
    synchronize(images.device.type)
    return steps * images.shape[0] / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="resnet_v1_50")
    parser.add_argument("--precision", choices=["fp32", "bf16"],
                        default="bf16")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--steps", type=int, default=50)
    # The CPU only to try the script on a machine without a GPU.
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    args = parser.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    model, config = build_model(args.model)
    model = model.to(args.device, memory_format=torch.channels_last).train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    size = config["image_size"]
    images = torch.randn(args.batch_size, config["channels"], size, size,
                         device=args.device).to(
                             memory_format=torch.channels_last)
    labels = torch.randint(0, config["num_classes"], (args.batch_size,),
                           device=args.device)

    def step(model, images, labels, precision):
        return train_step(model, optimizer, images, labels, precision)

    mode = "compile"
    try:
        compiled = torch.compile(model)
        rate = measure(compiled, step, images, labels, args.precision,
                       args.warmup, args.steps)
    except Exception as error:  # inductor needs a C compiler and Triton
        print(f"torch: torch.compile failed ({type(error).__name__}: "
              f"{error}); measuring eager", file=sys.stderr)
        mode = "eager"
        rate = measure(model, step, images, labels, args.precision,
                       args.warmup, args.steps)
    print(f"torch: model={args.model} precision={args.precision} "
          f"batch={args.batch_size} mode={mode} images_per_second={rate:.1f}")


if __name__ == "__main__":
    main()
