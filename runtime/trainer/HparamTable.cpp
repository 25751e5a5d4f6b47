//===- HparamTable.cpp - Every key a hyperparameter file may hold ---------===//
//
// Keys, defaults and help follow PAI FastNN's images/flags.py and the seed
// document (shared/HPARAMS.md); bounds are those TensorFlow 1.x's optimizers
// and schedules enforce or need to be meaningful. Compile-time keys are the
// ones that change the compiled step: its shapes (batch_size, num_classes),
// its arithmetic (optimizer and every optimizer setting, weight_decay,
// max_gradient_norm, use_fp16, precision, loss_scale, dynamic_loss_scale),
// its loop (iterations_per_loop), its collectives (allreduce_bucket_bytes)
// and its memory (memory_budget_mb).
//
//===----------------------------------------------------------------------===//

#include "fastnn/trainer/Hparams.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>

namespace fastnn::trainer {
namespace {

constexpr double Inf = std::numeric_limits<double>::infinity();

HparamSpec stringKey(const char *Section, const char *Name, const char *Default,
                     const char *Help) {
  return {Name,    Section, HparamType::String,
          Default, -Inf,    Inf,
          false,   false,   nullptr,
          false,   false,   Help};
}

HparamSpec enumKey(const char *Section, const char *Name, const char *Default,
                   const char *Choices, const char *Help,
                   bool CompileTime = false) {
  return {
      Name,    Section, HparamType::String, Default, -Inf, Inf, false, false,
      Choices, false,   CompileTime,        Help};
}

HparamSpec intKey(const char *Section, const char *Name, const char *Default,
                  double Min, const char *Help, bool CompileTime = false) {
  return {Name,  Section, HparamType::Int, Default, Min,         Inf,
          false, false,   nullptr,         false,   CompileTime, Help};
}

HparamSpec floatKey(const char *Section, const char *Name, const char *Default,
                    double Min, bool MinOpen, double Max, bool MaxOpen,
                    const char *Help, bool CompileTime = false) {
  return {Name,    Section, HparamType::Float, Default, Min,         Max,
          MinOpen, MaxOpen, nullptr,           false,   CompileTime, Help};
}

HparamSpec boolKey(const char *Section, const char *Name, const char *Default,
                   const char *Help, bool CompileTime = false) {
  return {Name,  Section, HparamType::Bool, Default, -Inf,        Inf,
          false, false,   nullptr,          false,   CompileTime, Help};
}

std::vector<HparamSpec> makeSpecs() {
  const char *Data = "Dataset";
  const char *Prep = "Preprocessing / input pipeline";
  const char *Model = "Model";
  const char *Lr = "Learning rate";
  const char *Opt = "Optimizer";
  const char *Log = "Logging";
  const char *Perf = "Performance";
  const char *Loop = "Loop and checkpoints";
  const char *Cluster = "Cluster";
  constexpr bool CT = true;
  const char *Hooks =
      "StopAtStepHook,ProfilerHook,LoggingTensorHook,CheckpointSaverHook";

  std::vector<HparamSpec> Specs = {
      stringKey(Data, "dataset_name", "mock",
                "parse spec of the records: mock (synthetic batches), "
                "cifar10, mnist, flowers or the path of a spec file"),
      stringKey(Data, "dataset_dir", nullptr,
                "directory (or file URI) holding the TFRecord files"),
      intKey(Data, "num_sample_per_epoch", nullptr, 1,
             "samples in one epoch; sets the decay steps of the "
             "exponential and polynomial schedules"),
      intKey(Data, "num_classes", "100", 1, "number of classes", CT),
      stringKey(Data, "train_files", nullptr,
                "comma-separated TFRecord file names, e.g. "
                "0.tfrecord,1.tfrecord"),
      stringKey(Data, "eval_files", nullptr,
                "comma-separated TFRecord files to evaluate on; unset: the "
                "*test* or *validation* record files of dataset_dir"),

      stringKey(Prep, "preprocessing_name", nullptr,
                "preprocessing function (none, inception, vgg, cifarnet, "
                "lenet); unset: chosen from model_name"),
      intKey(Prep, "shuffle_buffer_size", "1024", 0,
             "per-sample shuffle buffer (0 or 1: file order)"),
      intKey(Prep, "num_parallel_batches", "8", 1,
             "times batch_size = parallelism of the fused map-and-batch"),
      intKey(Prep, "prefetch_buffer_size", "32", 1, "batches prefetched ahead"),
      intKey(Prep, "num_preprocessing_threads", "16", 1,
             "threads that decode and preprocess in parallel"),
      boolKey(Prep, "datasets_use_caching", "False",
              "cache the (compressed) input in memory after the first epoch"),
      enumKey(Prep, "shard_by", "record", "record,file",
              "how data-parallel workers share the records: record (each "
              "worker every K-th record of the pass, shares within one "
              "record whatever the file sizes; needs uncompressed files and "
              "a FILE.fnnidx index beside each, built if missing) or file "
              "(worker r reads the files i with i % K == r)"),
      intKey(Prep, "skip_corrupt_records", "0", 0,
             "damaged records (bad CRC or framing, an Example or image that "
             "cannot be decoded) each worker skips, each logged and counted "
             "once; the next one stops the run (0: the first does)"),

      enumKey(Model, "task_type", "pretrain", "pretrain,finetune",
              "pretrain from the initial weights or finetune from a "
              "checkpoint"),
      stringKey(Model, "model_name", "inception_resnet_v2",
                "a model of the zoo; also picks the preprocessing"),
      intKey(Model, "num_epochs", "100", 1,
             "passes over the training set (bounds the run with "
             "num_sample_per_epoch)"),
      floatKey(Model, "weight_decay", "0.00004", 0, false, Inf, false,
               "L2 coefficient on conv and fully-connected weights", CT),
      floatKey(Model, "max_gradient_norm", nullptr, 0, true, Inf, false,
               "clip gradients by this global norm; unset: no clipping", CT),
      intKey(Model, "batch_size", "32", 1, "per-device batch per iteration",
             CT),
      stringKey(Model, "model_dir", nullptr,
                "checkpoint directory to restore from (finetune); with "
                "pretrain, the default train_dir"),
      stringKey(Model, "ckpt_file_name", nullptr,
                "checkpoint file in model_dir to restore (finetune); unset: "
                "model_dir's latest"),
      stringKey(Model, "init_from_onnx", nullptr,
                "ONNX model whose initializers (and external data beside "
                "it) give every trainable parameter and batch-norm "
                "statistic its starting value, matched by name; a "
                "checkpoint in train_dir to resume wins; not with "
                "task_type=finetune"),
      stringKey(Model, "weights_file", nullptr,
                "initial weights of a train.bin compiled with fastnnc "
                "--weights=external (given to an embedded one, they replace "
                "its own); unset: the executable's path plus .weights, "
                "where fastnnc writes them"),

      intKey(Lr, "warmup_steps", "0", 0, "steps of warm-up (0: none)"),
      enumKey(Lr, "warmup_scheme", "t2t", "t2t",
              "t2t: start at 1/100 of the rate and grow exponentially to it "
              "over warmup_steps"),
      enumKey(Lr, "decay_scheme", nullptr, "luong234,luong5,luong10",
              "luong234: 4 halvings over the last 1/3 of the steps; luong5, "
              "luong10: 5, 10 halvings over the last half"),
      floatKey(Lr, "learning_rate_decay_factor", "0.94", 0, true, 1, false,
               "factor of the exponential decay every 2 epochs"),
      enumKey(Lr, "learning_rate_decay_type", "exponential",
              "fixed,exponential,polynomial",
              "how the rate decays (TF-slim's schedules)"),
      floatKey(Lr, "learning_rate", "0.01", 0, false, Inf, false,
               "initial learning rate"),
      floatKey(Lr, "end_learning_rate", "0.0001", 0, false, Inf, false,
               "rate the polynomial decay ends at"),

      enumKey(Opt, "optimizer", "rmsprop",
              "adadelta,adagrad,adam,ftrl,momentum,sgd,rmsprop,"
              "adamweightdecay",
              "update rule (TensorFlow 1.x tf.train semantics; "
              "adamweightdecay is BERT's AdamW)",
              CT),
      floatKey(Opt, "adadelta_rho", "0.95", 0, false, 1, false,
               "Adadelta decay", CT),
      floatKey(Opt, "adagrad_initial_accumulator_value", "0.1", 0, true, Inf,
               false, "Adagrad accumulator start", CT),
      floatKey(Opt, "adam_beta1", "0.9", 0, false, 1, true,
               "Adam first-moment decay", CT),
      floatKey(Opt, "adam_beta2", "0.999", 0, false, 1, true,
               "Adam second-moment decay", CT),
      floatKey(Opt, "opt_epsilon", "1.0", 0, true, Inf, false,
               "optimizer epsilon (TF-slim's default is 1.0, not 1e-8)", CT),
      floatKey(Opt, "ftrl_learning_rate_power", "-0.5", -Inf, false, 0, false,
               "FTRL learning-rate power", CT),
      floatKey(Opt, "ftrl_initial_accumulator_value", "0.1", 0, false, Inf,
               false, "FTRL accumulator start", CT),
      floatKey(Opt, "ftrl_l1", "0.0", 0, false, Inf, false,
               "FTRL L1 regularisation", CT),
      floatKey(Opt, "ftrl_l2", "0.0", 0, false, Inf, false,
               "FTRL L2 regularisation", CT),
      floatKey(Opt, "momentum", "0.9", 0, false, 1, false,
               "momentum of the momentum optimizer", CT),
      floatKey(Opt, "rmsprop_momentum", "0.9", 0, false, 1, false,
               "RMSProp momentum", CT),
      floatKey(Opt, "rmsprop_decay", "0.9", 0, false, 1, false, "RMSProp decay",
               CT),

      intKey(Log, "stop_at_step", "100", 1, "total training iterations"),
      intKey(Log, "log_loss_every_n_iters", "10", 0,
             "how often the loss is printed (0: never)"),
      intKey(Log, "profile_every_n_iters", "0", 0,
             "how often a timeline is written (0: never)"),
      intKey(Log, "profile_at_task", "0", 0,
             "which worker writes timelines (0: the chief)"),
      boolKey(Log, "log_device_placement", "False", "print where each op runs"),
      boolKey(Log, "print_model_statistics", "False",
              "print the trainable variables with shapes and sizes"),
      {"hooks", Log, HparamType::String, Hooks, -Inf, Inf, false, false, Hooks,
       true, false, "training hooks that run, comma-separated"},

      boolKey(Perf, "use_fp16", "True",
              "half-precision training: given as True (and precision not "
              "given), it means precision=fp16",
              CT),
      floatKey(Perf, "loss_scale", "1.0", 0, true, Inf, false,
               "static loss scaling factor (the initial one with "
               "dynamic_loss_scale)",
               CT),
      enumKey(Perf, "precision", nullptr, "fp32,fp16,bf16",
              "type convolutions and matrix products compute in (weights "
              "keep fp32 master copies; loss, softmax and batch-norm "
              "statistics stay fp32); unset: fp16 if use_fp16=True is "
              "given, else fp32",
              CT),
      boolKey(Perf, "dynamic_loss_scale", nullptr,
              "adapt the loss scale: halve it and skip the update after an "
              "overflow, double it after 2000 finite steps; unset: True "
              "with precision=fp16 unless loss_scale is given (then from "
              "2^15)",
              CT),
      boolKey(Perf, "enable_paisoar", "True",
              "replicated variables + allreduce across workers"),
      enumKey(Perf, "protocol", "grpc", "grpc,grpc+verbs,grpc+mpi,grpc+gdr",
              "transport between workers; grpc+verbs on RDMA clusters"),
      intKey(Perf, "allreduce_bucket_bytes", "26214400", 0,
             "gradients are averaged across workers in collectives of up "
             "to this many bytes, in the order the backward pass completes "
             "them (25 MiB, as PyTorch DDP; 0: one per tensor)",
             CT),
      intKey(Perf, "memory_budget_mb", nullptr, 1,
             "largest arena (activations, gradients, parameters and "
             "optimizer slots) the training step may plan, in MiB: "
             "activations are recomputed in the backward pass instead of "
             "stored until it fits (unset: no budget)",
             CT),

      intKey(Loop, "iterations_per_loop", "1", 1,
             "training iterations per host call (loop sinking); "
             "stop_at_step and save_checkpoints_steps are multiples of it",
             CT),
      stringKey(Loop, "train_dir", nullptr,
                "where checkpoints, TensorBoard events and timelines go, and "
                "whose latest checkpoint a run resumes; unset: model_dir "
                "with pretrain, else nothing is saved"),
      intKey(Loop, "save_checkpoints_steps", "1000", 0,
             "steps between checkpoints (0: only at the end)"),
      intKey(Loop, "keep_checkpoint_max", "5", 0,
             "checkpoints kept in train_dir, the newest (0: all)"),
      intKey(Loop, "eval_every_n_iters", "0", 0,
             "evaluate every N steps and at the end (0: never during "
             "training; train.bin --eval evaluates a checkpoint)"),
      intKey(Loop, "seed", "0", 0, "seed of the input order and mock data"),
      boolKey(Loop, "deterministic", "False",
              "bitwise-reproducible runs (ordered input, fixed reduction "
              "order)"),

      enumKey(Cluster, "job_name", "worker", "worker,ps",
              "role of this process in the cluster"),
      intKey(Cluster, "task_index", "0", 0, "index of this process in its job"),
      intKey(Cluster, "collective_timeout_s", "600", 0,
             "a collective between workers that has not completed after "
             "this many seconds ends the job, naming the workers that did "
             "not arrive (0: wait forever)"),
  };
  return Specs;
}

size_t editDistance(const std::string &A, const std::string &B) {
  std::vector<size_t> Row(B.size() + 1);
  for (size_t J = 0; J <= B.size(); ++J)
    Row[J] = J;
  for (size_t I = 1; I <= A.size(); ++I) {
    size_t Diagonal = Row[0];
    Row[0] = I;
    for (size_t J = 1; J <= B.size(); ++J) {
      size_t Above = Row[J];
      Row[J] = std::min({Row[J] + 1, Row[J - 1] + 1,
                         Diagonal + (A[I - 1] == B[J - 1] ? 0 : 1)});
      Diagonal = Above;
    }
  }
  return Row[B.size()];
}

std::string typeName(const HparamSpec &Spec) {
  if (Spec.List)
    return "list";
  switch (Spec.Type) {
  case HparamType::String:
    return Spec.Choices ? "enum" : "string";
  case HparamType::Int:
    return "int";
  case HparamType::Float:
    return "float";
  case HparamType::Bool:
    return "bool";
  }
  return "";
}

} // namespace

const std::vector<HparamSpec> &hparamSpecs() {
  static const std::vector<HparamSpec> Specs = makeSpecs();
  return Specs;
}

const HparamSpec *findHparam(const std::string &Name) {
  for (const HparamSpec &Spec : hparamSpecs())
    if (Name == Spec.Name)
      return &Spec;
  return nullptr;
}

std::string closestHparam(const std::string &Name) {
  // Beyond about half the name's length the "closest" key is an unrelated
  // word, and suggesting it would mislead.
  size_t Limit = std::max<size_t>(2, Name.size() / 2);
  std::string Best;
  size_t BestDistance = std::numeric_limits<size_t>::max();
  for (const HparamSpec &Spec : hparamSpecs()) {
    // The distance is at least the difference in length: skipping keys
    // that cannot be within the limit keeps a long line of junk from
    // costing its length times every key's.
    size_t Length = std::strlen(Spec.Name);
    if ((Name.size() > Length ? Name.size() - Length : Length - Name.size()) >
        Limit)
      continue;
    size_t Distance = editDistance(Name, Spec.Name);
    if (Distance < BestDistance) {
      BestDistance = Distance;
      Best = Spec.Name;
    }
  }
  return BestDistance <= Limit ? Best : "";
}

std::string hparamsHelp() {
  std::string Text;
  const char *Section = "";
  for (const HparamSpec &Spec : hparamSpecs()) {
    if (std::string(Section) != Spec.Section) {
      Section = Spec.Section;
      Text += std::string(Text.empty() ? "" : "\n") + Section + ":\n";
    }
    char Line[256];
    std::snprintf(Line, sizeof(Line), "  %-34s %-6s default %s%s\n", Spec.Name,
                  typeName(Spec).c_str(), Spec.Default ? Spec.Default : "None",
                  Spec.CompileTime ? "  [compile-time]" : "");
    Text += Line;
    Text += std::string("      ") + Spec.Help;
    if (Spec.Choices)
      Text += std::string(" (") + (Spec.List ? "any of " : "one of ") +
              Spec.Choices + ")";
    Text += "\n";
  }
  Text += "\n[compile-time] keys are baked into the compiled step by fastnnc; "
          "train.bin\nrefuses a different value and takes the compiled one "
          "when the key is not given.\n";
  return Text;
}

} // namespace fastnn::trainer
