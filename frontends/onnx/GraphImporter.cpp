//===- GraphImporter.cpp - ONNX graph to a fastnn module ------------------===//

#include "ModelImport.h"

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

#include "google/protobuf/unknown_field_set.h"

#include <charconv>
#include <cstdlib>
#include <optional>

using namespace mlir;
using namespace mlir::fastnn;

namespace fastnn::onnx_import {

//===----------------------------------------------------------------------===//
// NodeImporter
//===----------------------------------------------------------------------===//

NodeImporter::NodeImporter(GraphImporter &graph, const onnx::NodeProto &node,
                           Location loc, int64_t version)
    : graph(graph), nodeProto(node), loc(loc), operatorVersion(version) {}

OpBuilder &NodeImporter::builder() { return graph.builder(); }

LogicalResult NodeImporter::error(const Twine &message) {
  // An attribute of the wrong type was read as absent: that is the cause of
  // whatever failed after it.
  if (!attrTypeError.empty())
    return emitError(loc) << nodeProto.op_type() << ": " << attrTypeError;
  return emitError(loc) << nodeProto.op_type() << ": " << message;
}

FailureOr<Value> NodeImporter::input(size_t i) {
  if (!hasInput(i))
    return error("input " + Twine(i) + " is required");
  return graph.lookup(nodeProto.input(i), loc);
}

FailureOr<SmallVector<Value>> NodeImporter::allInputs() {
  SmallVector<Value> inputs;
  for (size_t i = 0; i < numInputs(); ++i) {
    FailureOr<Value> v = input(i);
    if (failed(v))
      return failure();
    inputs.push_back(*v);
  }
  return inputs;
}

FailureOr<RankedTensorType> NodeImporter::inputType(size_t i) {
  FailureOr<Value> value = input(i);
  if (failed(value))
    return failure();
  return cast<RankedTensorType>(value->getType());
}

FailureOr<DenseElementsAttr> NodeImporter::constantInput(size_t i) {
  FailureOr<Value> value = input(i);
  if (failed(value))
    return failure();
  DenseElementsAttr attr;
  if (!matchPattern(*value, m_Constant(&attr))) {
    (void)error("input " + Twine(i) + " ('" + nodeProto.input(i) +
                "') must be known at compile time; fastnn compiles static "
                "shapes");
    return failure();
  }
  return attr;
}

FailureOr<SmallVector<int64_t>> NodeImporter::constantInts(size_t i) {
  FailureOr<DenseElementsAttr> attr = constantInput(i);
  if (failed(attr))
    return failure();
  if (!attr->getElementType().isInteger()) {
    (void)error("input " + Twine(i) + " must hold integers");
    return failure();
  }
  SmallVector<int64_t> values;
  for (const APInt &v : attr->getValues<APInt>())
    values.push_back(v.getSExtValue());
  return values;
}

FailureOr<double> NodeImporter::constantScalar(size_t i) {
  FailureOr<DenseElementsAttr> attr = constantInput(i);
  if (failed(attr))
    return failure();
  if (attr->getNumElements() != 1) {
    (void)error("input " + Twine(i) + " must be a scalar");
    return failure();
  }
  Type elementType = attr->getElementType();
  if (isa<FloatType>(elementType))
    return (*attr->getValues<APFloat>().begin()).convertToDouble();
  return static_cast<double>(
      (*attr->getValues<APInt>().begin()).getSExtValue());
}

void NodeImporter::setOutput(size_t i, Value value) {
  if (static_cast<int>(i) < nodeProto.output_size() &&
      !nodeProto.output(i).empty())
    graph.define(nodeProto.output(i), value);
}

bool NodeImporter::isUsed(size_t i) const {
  return static_cast<int>(i) < nodeProto.output_size() &&
         graph.isUsed(nodeProto.output(i));
}

LogicalResult NodeImporter::requireUnusedOutput(size_t i, StringRef what) {
  if (isUsed(i))
    return error("output " + Twine(i) + " (" + what +
                 ") is used, which fastnn does not support");
  return success();
}

/// Whether the attribute holds a value of `type`. ONNX's checker verifies
/// this against the operator's schema only for the opsets libonnx knows, so
/// every read checks it.
static bool holdsType(const onnx::AttributeProto &attr,
                      onnx::AttributeProto::AttributeType type) {
  if (attr.type() != onnx::AttributeProto::UNDEFINED)
    return attr.type() == type;
  // IR version 1 left the type out; the field that is set tells it.
  switch (type) {
  case onnx::AttributeProto::INT:
    return attr.has_i();
  case onnx::AttributeProto::FLOAT:
    return attr.has_f();
  case onnx::AttributeProto::STRING:
    return attr.has_s();
  case onnx::AttributeProto::TENSOR:
    return attr.has_t();
  case onnx::AttributeProto::INTS:
    return attr.ints_size() > 0;
  case onnx::AttributeProto::FLOATS:
    return attr.floats_size() > 0;
  default:
    return false;
  }
}

const onnx::AttributeProto *
NodeImporter::findAttr(StringRef name,
                       onnx::AttributeProto::AttributeType type) {
  for (const auto &attr : nodeProto.attribute()) {
    if (attr.name() != name)
      continue;
    handledAttrs.insert(name);
    if (holdsType(attr, type))
      return &attr;
    if (attrTypeError.empty())
      attrTypeError = "attribute '" + name.str() + "' must be of type " +
                      onnx::AttributeProto::AttributeType_Name(type) +
                      ", got " +
                      onnx::AttributeProto::AttributeType_Name(attr.type());
    return nullptr;
  }
  return nullptr;
}

bool NodeImporter::hasAttr(StringRef name) const {
  for (const auto &attr : nodeProto.attribute())
    if (attr.name() == name)
      return true;
  return false;
}

int64_t NodeImporter::intAttr(StringRef name, int64_t defaultValue) {
  const onnx::AttributeProto *attr = findAttr(name, onnx::AttributeProto::INT);
  return attr ? attr->i() : defaultValue;
}

/// ONNX stores float attributes in single precision; take the shortest
/// decimal that round-trips through float, so that epsilon = 0.001 means
/// 0.001 rather than 0.0010000000474974513.
static double widenFloat(float value) {
  char text[32];
  auto result = std::to_chars(text, text + sizeof(text), value);
  return std::strtod(std::string(text, result.ptr).c_str(), nullptr);
}

double NodeImporter::floatAttr(StringRef name, double defaultValue) {
  const onnx::AttributeProto *attr =
      findAttr(name, onnx::AttributeProto::FLOAT);
  return attr ? widenFloat(attr->f()) : defaultValue;
}

std::string NodeImporter::stringAttr(StringRef name, StringRef defaultValue) {
  const onnx::AttributeProto *attr =
      findAttr(name, onnx::AttributeProto::STRING);
  return attr ? attr->s() : defaultValue.str();
}

std::optional<SmallVector<int64_t>> NodeImporter::intsAttr(StringRef name) {
  const onnx::AttributeProto *attr = findAttr(name, onnx::AttributeProto::INTS);
  if (!attr)
    return std::nullopt;
  return SmallVector<int64_t>(attr->ints().begin(), attr->ints().end());
}

std::optional<SmallVector<float>> NodeImporter::floatsAttr(StringRef name) {
  const onnx::AttributeProto *attr =
      findAttr(name, onnx::AttributeProto::FLOATS);
  if (!attr)
    return std::nullopt;
  return SmallVector<float>(attr->floats().begin(), attr->floats().end());
}

const onnx::TensorProto *NodeImporter::tensorAttr(StringRef name) {
  const onnx::AttributeProto *attr =
      findAttr(name, onnx::AttributeProto::TENSOR);
  return attr ? &attr->t() : nullptr;
}

LogicalResult NodeImporter::checkAllAttrsHandled() {
  if (!attrTypeError.empty())
    return error(attrTypeError);
  for (const auto &attr : nodeProto.attribute())
    if (!handledAttrs.count(attr.name()))
      return error("unsupported attribute '" + attr.name() + "'");
  return success();
}

FailureOr<Value>
NodeImporter::createInferred(StringRef opName, ValueRange operands,
                             ArrayRef<NamedAttribute> attributes) {
  OperationState state(loc, opName);
  state.addOperands(operands);
  state.addAttributes(attributes);
  // A provisional result type, replaced by what the op infers; building
  // through the inferring builder would abort on a bad model instead.
  state.addTypes(builder().getNoneType());
  Operation *op = builder().create(state);
  SmallVector<Type, 1> types;
  auto inference = cast<InferTypeOpInterface>(op);
  if (failed(inference.inferReturnTypes(
          context(), loc, op->getOperands(), op->getRawDictionaryAttrs(),
          op->getPropertiesStorage(), op->getRegions(), types))) {
    op->erase();
    return failure();
  }
  op->getResult(0).setType(types.front());
  return fold(op);
}

Value NodeImporter::fold(Operation *op) {
  SmallVector<Value, 1> results;
  if (succeeded(builder().tryFold(op, results)) && !results.empty() &&
      results.front() != op->getResult(0)) {
    op->erase();
    return results.front();
  }
  return op->getResult(0);
}

Value NodeImporter::scalarConstant(Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute element = isa<FloatType>(elementType)
                          ? Attribute(FloatAttr::get(elementType, value))
                          : Attribute(IntegerAttr::get(
                                elementType, static_cast<int64_t>(value)));
  return ConstantOp::create(builder(), loc,
                            DenseElementsAttr::get(type, element));
}

Value NodeImporter::reshape(Value input, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(input.getType()).clone(shape);
  return fold(ReshapeOp::create(builder(), loc, type, input));
}

FailureOr<int64_t> NodeImporter::normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    (void)error("axis " + Twine(axis) + " is out of range for rank " +
                Twine(rank));
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}

Value NodeImporter::untieParameter(Value value) {
  if (node().output_size() == 0 || node().output(0).empty())
    return value;
  return graph.untieParameter(value, node().output(0), loc);
}

//===----------------------------------------------------------------------===//
// GraphImporter
//===----------------------------------------------------------------------===//

GraphImporter::GraphImporter(MLIRContext &context,
                             const onnx::ModelProto &model, StringRef path,
                             const ONNXImportOptions &options)
    : context(context), model(model), path(path.str()),
      modelDir(llvm::sys::path::parent_path(path).str()), options(options),
      moduleBuilder(&context), bodyBuilder(&context) {
  for (const auto &entry : model.opset_import())
    if (entry.domain().empty() || entry.domain() == "ai.onnx")
      opset = entry.version();
}

Location GraphImporter::fileLoc() {
  return FileLineColLoc::get(&context, path, 0, 0);
}

Location GraphImporter::nodeLoc(const onnx::NodeProto &node, size_t index) {
  return NameLoc::get(StringAttr::get(&context, nodeDisplayName(node, index)),
                      fileLoc());
}

FailureOr<Value> GraphImporter::lookup(const std::string &name, Location loc) {
  auto it = values.find(name);
  if (it != values.end())
    return it->second;
  auto init = constantInitializers.find(name);
  if (init == constantInitializers.end())
    return emitError(loc) << "refers to undefined value '" << name << "'";
  const onnx::TensorProto &tensor = *init->second;
  RankedTensorType type;
  std::vector<char> data;
  if (std::string error = tensorTypeOf(
          tensor, convertElementType(tensor.data_type(), &context), type);
      !error.empty())
    return emitError(loc) << error;
  if (std::string error = readTensorData(tensor, modelDir, type, data);
      !error.empty())
    return emitError(loc) << error;
  Value constant =
      ConstantOp::create(bodyBuilder, loc, makeDenseAttr(type, data));
  values[name] = constant;
  return constant;
}

void GraphImporter::define(const std::string &name, Value value) {
  values[name] = value;
}

Value GraphImporter::untieParameter(Value value, const std::string &newName,
                                    Location loc) {
  auto read = value.getDefiningOp<ParamOp>();
  if (!read)
    return value;
  auto source = SymbolTable::lookupNearestSymbolFrom<ParameterOp>(
      read, read.getNameAttr());
  auto copy = ParameterOp::create(moduleBuilder, loc, newName, source.getRole(),
                                  source.getInitialValue());
  // The symbol table renames on a clash, so the copy's name is unique.
  SymbolTable(*module).insert(copy);
  // PyTorch's exporter ties every pair of equal initial tensors (all zero
  // biases, say): one full warning, the rest counted into one line.
  if (untiedParameters++ == 0)
    emitWarning(loc) << "Identity copies parameter '" << read.getName()
                     << "'; imported as separate parameter '"
                     << copy.getSymName()
                     << "' so that training does not tie them";
  return ParamOp::create(bodyBuilder, loc, copy.getType(), copy.getSymName());
}

/// The value of `key` among a message's metadata_props (field
/// `fieldNumber`: 9 of NodeProto, 4 of ValueInfoProto). Those fields are
/// newer than the linked libonnx 1.12, so they are read from the unknown
/// fields.
static std::optional<std::string>
metadataValue(const google::protobuf::UnknownFieldSet &unknown, int fieldNumber,
              llvm::StringRef key) {
  for (int i = 0; i < unknown.field_count(); ++i) {
    const auto &field = unknown.field(i);
    onnx::StringStringEntryProto entry;
    if (field.number() == fieldNumber &&
        field.type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED &&
        entry.ParseFromString(field.length_delimited()) && entry.key() == key)
      return entry.value();
  }
  return std::nullopt;
}

/// PyTorch's default exporter's record of what each graph input of the
/// exported program was (PARAMETER, BUFFER, ...), by value name.
static llvm::StringMap<std::string>
exportedInputKinds(const onnx::GraphProto &graph) {
  llvm::StringMap<std::string> kinds;
  for (const onnx::ValueInfoProto &info : graph.value_info())
    if (std::optional<std::string> kind =
            metadataValue(info.unknown_fields(), 4,
                          "pkg.torch.export.graph_signature.InputSpec.kind"))
      kinds[info.name()] = *kind;
  return kinds;
}

/// The onnxscript optimizer's record of the values it folded each
/// initializer from (a Python list, "['p']"), by value name.
static llvm::StringMap<std::string>
foldedSources(const onnx::GraphProto &graph) {
  llvm::StringMap<std::string> sources;
  for (const onnx::ValueInfoProto &info : graph.value_info())
    if (std::optional<std::string> folded = metadataValue(
            info.unknown_fields(), 4, "pkg.onnxscript.optimizer.folded_from"))
      sources[info.name()] = *folded;
  return sources;
}

LogicalResult GraphImporter::importInitializers() {
  const onnx::GraphProto &graph = model.graph();
  // Initializers read only where a constant is required (Clip bounds, a
  // Reshape's shape, ...) are hyperparameters of the graph, not weights.
  llvm::StringSet<> readAsWeight;
  for (const auto &node : graph.node()) {
    const OpRecord *record = lookupOpRecord(node.op_type());
    for (int i = 0; i < node.input_size(); ++i) {
      if (record && llvm::is_contained(record->statisticInputs, i))
        statisticNames.insert(node.input(i));
      if (!record || !llvm::is_contained(record->constantInputs, i))
        readAsWeight.insert(node.input(i));
    }
  }
  for (const auto &output : graph.output())
    readAsWeight.insert(output.name());
  // tf2onnx writes every constant of the TensorFlow graph as an initializer;
  // the model's variables are the ones it read through ReadVariableOp (TF2's
  // resource variables, which Keras models have). Where a graph has such
  // names, its other initializers (a Rescaling layer's scale, normalisation
  // constants folded by TensorFlow, ...) are constants, not weights. A graph
  // of TF1 variables frozen into constants has no such names and keeps the
  // rule above.
  auto isTFVariable = [](const onnx::TensorProto &tensor) {
    return llvm::StringRef(tensor.name()).contains("ReadVariableOp");
  };
  bool tfVariablesNamed = model.producer_name() == "tf2onnx" &&
                          llvm::any_of(graph.initializer(), isTFVariable);
  // PyTorch's default exporter records what each module input was in the
  // metadata of its value_info: PARAMETER, BUFFER, ... Where it did, only
  // the parameters are weights; buffers (batch-norm statistics aside, which
  // the operator records mark) and the constants its decompositions need
  // (onnxscript's val_<N>: the zeros of an absent batch-norm bias, shared by
  // every such node) are constants. Initializers its optimizer computed from
  // parameters (a folded weight standardisation, view_<N>) stay weights,
  // trained in place of the parameters they came from, with a warning.
  // A one-element initializer folded from no parameter is a constant of a
  // decomposition too: train-mode dropout's keep probability (p_cast). (A
  // larger one may come from a parameter through values the record names
  // but no longer exist, as nf_resnet's weight standardisation's do.)
  llvm::StringMap<std::string> exportedKinds = exportedInputKinds(graph);
  llvm::StringMap<std::string> folded = foldedSources(graph);
  auto isGeneratedConstant = [&](const onnx::TensorProto &tensor) {
    llvm::StringRef name = tensor.name();
    if (name.consume_front("val_") && !name.empty() &&
        llvm::all_of(name, llvm::isDigit))
      return true;
    auto sources = folded.find(tensor.name());
    if (sources == folded.end() ||
        llvm::any_of(tensor.dims(), [](int64_t d) { return d != 1; }))
      return false;
    return llvm::none_of(exportedKinds, [&](const auto &kind) {
      return kind.second == "PARAMETER" &&
             llvm::StringRef(sources->second)
                 .contains(("'" + kind.first() + "'").str());
    });
  };
  SmallVector<std::string> foldedFromParameters;
  for (const onnx::TensorProto &tensor : graph.initializer()) {
    Type elementType = convertElementType(tensor.data_type(), &context);
    if (!elementType)
      return emitError(fileLoc())
             << "initializer '" << tensor.name()
             << "' has an unsupported element type (ONNX data type "
             << tensor.data_type() << ")";
    bool constant = (usedNames.count(tensor.name()) &&
                     !readAsWeight.count(tensor.name())) ||
                    (tfVariablesNamed && !isTFVariable(tensor));
    if (!exportedKinds.empty() && isa<FloatType>(elementType) && !constant) {
      auto kind = exportedKinds.find(tensor.name());
      if (kind != exportedKinds.end())
        constant =
            kind->second != "PARAMETER" && !statisticNames.count(tensor.name());
      else if (isGeneratedConstant(tensor))
        constant = true;
      else if (usedNames.count(tensor.name()))
        foldedFromParameters.push_back(tensor.name());
    }
    if (!isa<FloatType>(elementType) || constant) {
      constantInitializers[tensor.name()] = &tensor;
      continue;
    }
    RankedTensorType type;
    std::vector<char> data;
    // The blob below copies from data.data(), which must not be null even
    // for a tensor without elements.
    data.reserve(1);
    if (std::string error = tensorTypeOf(tensor, elementType, type);
        !error.empty())
      return emitError(fileLoc()) << error;
    // The code generator fails on parameters of no elements.
    if (type.getNumElements() == 0 && usedNames.count(tensor.name()))
      return emitError(fileLoc())
             << "initializer '" << tensor.name() << "' is an empty tensor "
             << type << "; fastnn computes on tensors of at least one element";
    if (std::string error = readTensorData(tensor, modelDir, type, data);
        !error.empty())
      return emitError(fileLoc()) << error;
    auto blob =
        HeapAsmResourceBlob::allocateAndCopyWithAlign(data, alignof(double));
    auto initialValue =
        DenseResourceElementsAttr::get(type, tensor.name(), std::move(blob));
    ParamRole role = statisticNames.count(tensor.name()) ? ParamRole::Statistic
                                                         : ParamRole::Trainable;
    Location loc =
        NameLoc::get(StringAttr::get(&context, tensor.name()), fileLoc());
    auto parameter = ParameterOp::create(moduleBuilder, loc, tensor.name(),
                                         role, initialValue);
    if (usedNames.count(tensor.name()))
      values[tensor.name()] =
          ParamOp::create(bodyBuilder, loc, type, parameter.getSymName());
  }
  if (!foldedFromParameters.empty())
    emitWarning(fileLoc())
        << foldedFromParameters.size()
        << " initializers are not module parameters but computed from them "
           "by the exporter's optimizer (e.g. '"
        << foldedFromParameters.front()
        << "'); train.bin trains them in place of the parameters: export "
           "with torch.onnx.export(..., optimize=False) to train the module's "
           "own";
  return success();
}

LogicalResult GraphImporter::importInputs(SmallVectorImpl<Type> &types,
                                          SmallVectorImpl<std::string> &names) {
  llvm::StringSet<> initializerNames;
  for (const auto &tensor : model.graph().initializer())
    initializerNames.insert(tensor.name());
  for (const onnx::ValueInfoProto &input : model.graph().input()) {
    // IR versions before 4 list initializers among the inputs too.
    if (initializerNames.count(input.name()))
      continue;
    Location loc = fileLoc();
    if (!input.type().has_tensor_type())
      return emitError(loc)
             << "graph input '" << input.name() << "' is not a tensor";
    const auto &tensorType = input.type().tensor_type();
    Type elementType = convertElementType(tensorType.elem_type(), &context);
    if (!elementType)
      return emitError(loc) << "graph input '" << input.name()
                            << "' has an unsupported element type";
    SmallVector<int64_t> shape;
    for (const auto &dim : tensorType.shape().dim()) {
      if (!dim.has_dim_value() || dim.dim_value() <= 0)
        return emitError(loc)
               << "graph input '" << input.name() << "' has a dynamic "
               << "dimension " << shape.size()
               << (dim.has_dim_param() ? " ('" + dim.dim_param() + "')" : "")
               << "; fastnn compiles static shapes: set --batch-size for the "
                  "first dimension, or export the model with fixed sizes";
      shape.push_back(dim.dim_value());
    }
    types.push_back(RankedTensorType::get(shape, elementType));
    names.push_back(input.name());
  }
  return success();
}

LogicalResult GraphImporter::importNode(const onnx::NodeProto &node,
                                        size_t index) {
  Location loc = nodeLoc(node, index);
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return emitError(loc) << node.op_type() << ": operators of domain '"
                          << node.domain() << "' are not supported";
  const OpRecord *record = lookupOpRecord(node.op_type());
  if (!record)
    return emitError(loc) << "unsupported ONNX operator '" << node.op_type()
                          << "' (see docs/onnx-support.md for the supported "
                             "operators)";
  int64_t version = selectedVersion(node.op_type(), opset);
  if (!llvm::is_contained(record->versions, version)) {
    InFlightDiagnostic diag = emitError(loc);
    diag << node.op_type() << ": opset " << opset << " selects version "
         << version << ", which fastnn does not implement (it implements "
         << node.op_type() << " version";
    if (record->versions.size() > 1)
      diag << "s";
    for (auto [i, implemented] : llvm::enumerate(record->versions))
      diag << (i == 0 ? " " : ", ") << implemented;
    return diag << "); re-export the model with an opset that selects one "
                   "of them";
  }
  NodeImporter nodeImporter(*this, node, loc, version);
  if (failed(record->importer(nodeImporter)))
    return failure();
  return nodeImporter.checkAllAttrsHandled();
}

LogicalResult GraphImporter::checkOutputShapes(ArrayRef<Value> results) {
  for (auto [output, value] : llvm::zip(model.graph().output(), results)) {
    const auto &shape = output.type().tensor_type().shape();
    auto type = cast<RankedTensorType>(value.getType());
    if (!output.type().tensor_type().has_shape())
      continue;
    if (shape.dim_size() != type.getRank())
      return emitError(fileLoc())
             << "graph output '" << output.name() << "' has rank "
             << type.getRank() << " but ONNX shape inference says "
             << shape.dim_size();
    for (int d = 0; d < shape.dim_size(); ++d)
      if (shape.dim(d).has_dim_value() &&
          shape.dim(d).dim_value() != type.getDimSize(d))
        return emitError(fileLoc())
               << "graph output '" << output.name() << "' is " << type
               << " but ONNX shape inference gives dimension " << d << " size "
               << shape.dim(d).dim_value();
  }
  return success();
}

/// Whether PyTorch's default exporter (its onnxscript optimizer) folded a
/// batch norm into this node, which it does in train mode too and records
/// in the node's metadata_props.
static bool onnxscriptFoldedBatchNorm(const onnx::NodeProto &node) {
  std::optional<std::string> rule = metadataValue(
      node.unknown_fields(), 9, "pkg.onnxscript.rewriter.rule_name");
  return rule && llvm::StringRef(*rule).contains("FuseBatchNormIntoConv");
}

/// Whether tf2onnx's default graph optimizer folded a batch norm into this
/// convolution: it leaves no record but the names of the constants it
/// writes, <node>_weights_fused_bn and <node>_bias_fused_bn.
static bool tf2onnxFoldedBatchNorm(const onnx::NodeProto &node) {
  return node.op_type() == "Conv" &&
         llvm::any_of(node.input(), [](const std::string &name) {
           return llvm::StringRef(name).ends_with("_fused_bn");
         });
}

OwningOpRef<ModuleOp> GraphImporter::run() {
  const onnx::GraphProto &graph = model.graph();
  module = ModuleOp::create(fileLoc());
  Builder b(&context);
  (*module)->setAttr("fastnn.source", b.getStringAttr(path));
  (*module)->setAttr("fastnn.onnx_opset", b.getI64IntegerAttr(opset));
  if (!model.producer_name().empty())
    (*module)->setAttr("fastnn.onnx_producer",
                       b.getStringAttr(model.producer_name() + " " +
                                       model.producer_version()));
  for (const auto &node : graph.node())
    for (const auto &name : node.input())
      usedNames.insert(name);
  for (const auto &output : graph.output())
    usedNames.insert(output.name());

  SmallVector<Type> inputTypes;
  SmallVector<std::string> inputNames;
  if (failed(importInputs(inputTypes, inputNames)))
    return nullptr;
  moduleBuilder.setInsertionPointToStart(module->getBody());
  auto func =
      func::FuncOp::create(moduleBuilder, fileLoc(), options.functionName,
                           b.getFunctionType(inputTypes, {}));
  Block *entry = func.addEntryBlock();
  bodyBuilder.setInsertionPointToStart(entry);
  for (auto [i, name] : llvm::enumerate(inputNames)) {
    func.setArgAttr(i, "fastnn.name", b.getStringAttr(name));
    values[name] = entry->getArgument(i);
  }
  // Parameters go before the function, in initializer order.
  moduleBuilder.setInsertionPoint(func);
  if (failed(importInitializers()))
    return nullptr;

  for (auto [index, node] : llvm::enumerate(graph.node()))
    if (failed(importNode(node, index)))
      return nullptr;
  if (untiedParameters > 1)
    emitWarning(fileLoc()) << untiedParameters - 1
                           << " more Identity nodes copy parameters; each "
                              "copy is imported as a separate parameter too";
  if (int64_t folded = llvm::count_if(graph.node(), onnxscriptFoldedBatchNorm))
    emitWarning(fileLoc())
        << folded
        << " convolutions have batch norm folded in by the exporter "
           "(FuseBatchNormIntoConv); train.bin trains them without batch "
           "normalization: export with torch.onnx.export(..., optimize=False) "
           "or dynamo=False to keep it";
  if (int64_t folded = llvm::count_if(graph.node(), tf2onnxFoldedBatchNorm))
    emitWarning(fileLoc())
        << folded
        << " convolutions have batch norm folded in by tf2onnx's optimizer "
           "(*_fused_bn constants); train.bin trains them without batch "
           "normalization: convert with tf2onnx.convert.from_keras(..., "
           "optimizers={}) to keep it";

  SmallVector<Value> results;
  for (const auto &output : graph.output()) {
    FailureOr<Value> value = lookup(output.name(), fileLoc());
    if (failed(value))
      return nullptr;
    results.push_back(*value);
  }
  func::ReturnOp::create(bodyBuilder, fileLoc(), results);
  func.setType(b.getFunctionType(inputTypes, TypeRange(ValueRange(results))));
  for (auto [i, output] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, "fastnn.name", b.getStringAttr(output.name()));
  if (failed(checkOutputShapes(results)) || failed(verify(*module)))
    return nullptr;
  return std::move(module);
}

} // namespace fastnn::onnx_import

namespace fastnn {
OwningOpRef<ModuleOp> importONNXFile(MLIRContext &context, StringRef path,
                                     const ONNXImportOptions &options) {
  context.loadDialect<FastNNDialect, func::FuncDialect>();
  onnx::ModelProto model, asRead;
  if (std::string error =
          onnx_import::loadModel(path, options.batchSize, model,
                                 options.exportTemplate ? &asRead : nullptr);
      !error.empty()) {
    emitError(FileLineColLoc::get(&context, path, 0, 0)) << error;
    return nullptr;
  }
  OwningOpRef<ModuleOp> module =
      onnx_import::GraphImporter(context, model, path, options).run();
  if (!module || !options.exportTemplate)
    return module;
  llvm::StringSet<> parameters;
  for (auto parameter : module->getOps<ParameterOp>())
    parameters.insert(parameter.getSymName());
  if (std::string error = onnx_import::makeExportTemplate(
          context, std::move(asRead), parameters,
          llvm::sys::path::parent_path(path), *options.exportTemplate);
      !error.empty()) {
    emitError(FileLineColLoc::get(&context, path, 0, 0)) << error;
    return nullptr;
  }
  return module;
}
} // namespace fastnn
