/*===- model.h - what fastnnc emits for each compiled model --------------===*
 *
 * The object fastnnc generates defines these symbols; the drivers (infer.bin,
 * train.bin, the test step runners) link against them. All model memory is
 * one arena of fnn_model_arena_bytes bytes made with fnn_device_alloc; every
 * tensor lives at a fixed offset in it, which host code reaches through
 * fastnn/runtime/ModelDevice.h.
 *
 *===----------------------------------------------------------------------===*/

#ifndef FASTNN_RUNTIME_MODEL_H
#define FASTNN_RUNTIME_MODEL_H

#include "fastnn/runtime/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

enum fnn_io_kind { FNN_IO_INPUT = 0, FNN_IO_OUTPUT = 1 };
enum fnn_state_role {
  FNN_STATE_TRAINABLE = 0,
  FNN_STATE_STATISTIC = 1,
  FNN_STATE_SLOT = 2
};

/* Words of one record of fnn_model_io: kind, dtype (enum fnn_dtype), rank,
 * dims[FNN_MAX_RANK], arena byte offset, name offset and name length in
 * fnn_model_io_names. */
#define FNN_IO_RECORD_WORDS (3 + FNN_MAX_RANK + 3)

extern const int64_t fnn_model_arena_bytes;
/* fnn_model_io[0] is the number of records; the records follow. */
extern const int64_t fnn_model_io[];
/* Names of the inputs and outputs, concatenated without terminators. */
extern const char fnn_model_io_names[];

/* The model's state: parameters, batch-norm statistics and optimizer slots,
 * what a checkpoint saves. fnn_model_state[0] is the number of records; each
 * has the layout of an fnn_model_io record with kind replaced by the role
 * (enum fnn_state_role), names in fnn_model_state_names. */
extern const int64_t fnn_model_state[];
extern const char fnn_model_state_names[];

/* 1 when the model was compiled with fastnnc --weights=external:
 * fnn_model_init then writes no trainable parameter or batch-norm statistic
 * (optimizer slots and constants it still writes), and the driver loads
 * them, from the weights file fastnnc wrote beside the executable
 * (fastnn/trainer/InitialWeights.h) or, in train.bin, from a checkpoint or
 * init_from_onnx. 0 when their initial values are embedded. */
extern const int64_t fnn_model_external_weights;

/* The hyperparameters the model was compiled with, as "key=value" lines;
 * NUL-terminated. Empty for inference models. */
extern const char fnn_model_config[];

/* A training model (fastnnc without --mode=infer) is one training step:
 * inputs "images", "labels" (int64 class indices), "learning_rate" (float
 * scalar) and "step" (int64 scalar, 1-based); outputs "loss" (float
 * scalar, the regularised loss), "top1" and "top5" (float scalars, the
 * batch's accuracies). fnn_model_run performs the forward pass, the
 * backward pass and the optimizer update in place on the arena. */

/* Copies the initial parameter values into the arena and creates every
 * kernel; returns 0, or -1 with fnn_last_error() set. */
int64_t fnn_model_init(fnn_device *device, void *arena);
/* Runs the model once on the arena's inputs, writing its outputs. */
void fnn_model_run(void *arena);
/* Destroys the kernels fnn_model_init created. */
void fnn_model_release(void);

/* A train.bin also holds the evaluation step, compiled from the same
 * forward graph into its own arena with inference semantics (batch norm
 * uses its running statistics, dropout is off). Inputs "images" and
 * "labels" as in training; outputs, one value per sample: "loss" (float
 * [batch], softmax cross-entropy of the logits), "top1" and "top5" (float
 * [batch], 1 where the label is among the k largest logits, else 0), so a
 * caller can count a last partial batch exactly. Its state records list the
 * trainable parameters and statistics under the training model's names and
 * shapes; the trainer copies them in before evaluating. The symbols follow
 * the fnn_model_* ones with the prefix fnn_eval. */
extern const int64_t fnn_eval_arena_bytes;
extern const int64_t fnn_eval_io[];
extern const char fnn_eval_io_names[];
extern const int64_t fnn_eval_state[];
extern const char fnn_eval_state_names[];
int64_t fnn_eval_init(fnn_device *device, void *arena);
void fnn_eval_run(void *arena);
void fnn_eval_release(void);

/* The ONNX model train.bin was compiled from (a serialized ModelProto, with
 * external data inlined and the data of the initializers that became state
 * left out), for train.bin --export-onnx to refill from the arena. */
extern const int64_t fnn_model_onnx_bytes;
extern const char fnn_model_onnx[];

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FASTNN_RUNTIME_MODEL_H */
