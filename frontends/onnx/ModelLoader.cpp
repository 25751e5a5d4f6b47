//===- ModelLoader.cpp - read, check and normalise an ONNX model ----------===//

#include "ModelImport.h"

#include "onnx/checker.h"
#include "onnx/defs/parser.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx/version_converter/convert.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/io/coded_stream.h>

#include <map>
#include <memory>

namespace fastnn::onnx_import {

namespace {

/// The operators' records implement the versions opset 13 and later select;
/// older models are converted up to it.
constexpr int kMinimumOpset = 13;

/// The last opset the linked ONNX library defines (17 for Debian's onnx
/// 1.12). Its checker, version converter and shape inference know the
/// operators' versions up to it only; newer models skip them and rely on
/// the importer's own checks (checkGraphStructure and the ones beside it).
int libonnxNewestOpset() {
  return onnx::OpSchemaRegistry::DomainToVersionRange::Instance()
      .Map()
      .at(onnx::ONNX_DOMAIN)
      .second;
}

int64_t defaultDomainOpset(const onnx::ModelProto &model) {
  for (const auto &entry : model.opset_import())
    if (entry.domain().empty() || entry.domain() == "ai.onnx")
      return entry.version();
  return 0;
}

std::string parseBinary(const llvm::MemoryBuffer &buffer,
                        onnx::ModelProto &model) {
  google::protobuf::io::CodedInputStream stream(
      reinterpret_cast<const uint8_t *>(buffer.getBufferStart()),
      static_cast<int>(buffer.getBufferSize()));
  stream.SetTotalBytesLimit(INT32_MAX);
  if (!model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
    return "is not a valid ONNX model (protobuf parsing failed: the file is "
           "truncated, corrupt or not ONNX)";
  if (!model.has_graph() || model.ir_version() == 0)
    return "is not an ONNX model (no graph or IR version); pass a .onnx file "
           "or ONNX text in a .onnxtxt file";
  return "";
}

/// What ONNX's checker verifies of a graph's structure, for the opsets it
/// does not know: every value is defined once (static single assignment),
/// every node input by a graph input, an initializer or an earlier node,
/// and every attribute says its type. The importer reads an attribute only
/// as the type it expects (NodeImporter::findAttr).
std::string checkGraphStructure(const onnx::GraphProto &graph) {
  llvm::StringSet<> initializers, defined;
  for (const auto &init : graph.initializer()) {
    if (init.name().empty())
      return "an initializer has no name";
    if (!initializers.insert(init.name()).second)
      return "initializer '" + init.name() + "' is defined twice";
  }
  defined = initializers;
  for (const auto &input : graph.input()) {
    if (input.name().empty())
      return "a graph input has no name";
    // IR versions before 4 list initializers among the inputs too.
    if (!defined.insert(input.name()).second &&
        !initializers.count(input.name()))
      return "graph input '" + input.name() + "' is defined twice";
  }
  for (int index = 0; index < graph.node_size(); ++index) {
    const onnx::NodeProto &node = graph.node(index);
    std::string where = "node '" + nodeDisplayName(node, index) + "' (" +
                        node.op_type() + "): ";
    for (const std::string &input : node.input())
      if (!input.empty() && !defined.count(input))
        return where + "input '" + input +
               "' is not defined by a graph input, an initializer or an "
               "earlier node (nodes must be in topological order)";
    for (const onnx::AttributeProto &attribute : node.attribute()) {
      if (attribute.name().empty())
        return where + "an attribute has no name";
      if (attribute.type() == onnx::AttributeProto::UNDEFINED)
        return where + "attribute '" + attribute.name() + "' has no type";
    }
    for (const std::string &output : node.output())
      if (!output.empty() && !defined.insert(output).second)
        return where + "output '" + output +
               "' is already defined; ONNX graphs assign each value once";
  }
  return "";
}

/// ONNX's checker accepts a graph output that nothing defines, but its IR
/// (which the version converter builds) dereferences the missing producer.
std::string undefinedGraphOutput(const onnx::GraphProto &graph) {
  llvm::StringSet<> defined;
  for (const auto &input : graph.input())
    defined.insert(input.name());
  for (const auto &init : graph.initializer())
    defined.insert(init.name());
  for (const auto &node : graph.node())
    for (const std::string &output : node.output())
      defined.insert(output);
  for (const auto &output : graph.output())
    if (!defined.count(output.name()))
      return "graph output '" + output.name() +
             "' is produced by no node and is neither an input nor an "
             "initializer";
  return "";
}

/// ONNX's checker accepts window attributes of zero or below, and its
/// convolution and pooling shape inference divides by the strides: a zero
/// stride ends the process with SIGFPE before any error can be given.
std::string nonPositiveWindowAttribute(const onnx::GraphProto &graph) {
  for (int index = 0; index < graph.node_size(); ++index) {
    const onnx::NodeProto &node = graph.node(index);
    for (const onnx::AttributeProto &attribute : node.attribute()) {
      if (attribute.name() != "strides" && attribute.name() != "dilations" &&
          attribute.name() != "kernel_shape")
        continue;
      if (llvm::all_of(attribute.ints(), [](int64_t v) { return v > 0; }))
        continue;
      std::string values;
      for (int64_t v : attribute.ints())
        values += (values.empty() ? "" : ", ") + std::to_string(v);
      return "node '" + nodeDisplayName(node, index) + "': " + node.op_type() +
             "'s " + attribute.name() + " must be positive, got [" + values +
             "]";
    }
  }
  return "";
}

/// libonnx 1.12's shape inference of the convolutions reads the kernel size
/// from the filter when kernel_shape is absent, then indexes vectors sized
/// by the input's rank with it: a filter of higher rank than the input reads
/// past their ends (a null dereference, found by the ONNXImportFuzzer). This
/// registry hands out copies of those schemas whose inference first fails,
/// as an exception, on ranks that disagree.
class RankCheckedSchemaRegistry final : public onnx::ISchemaRegistry {
public:
  const onnx::OpSchema *GetSchema(const std::string &key,
                                  const int maxInclusiveVersion,
                                  const std::string &domain) const override {
    const onnx::OpSchema *schema =
        onnx::OpSchemaRegistry::Instance()->GetSchema(key, maxInclusiveVersion,
                                                      domain);
    int filterIndex = filterInput(key, domain);
    if (!schema || filterIndex < 0)
      return schema;
    std::unique_ptr<onnx::OpSchema> &checked = checkedSchemas[schema];
    if (!checked) {
      checked = std::make_unique<onnx::OpSchema>(*schema);
      checked->TypeAndShapeInferenceFunction(
          [infer = schema->GetTypeAndShapeInferenceFunction(),
           filterIndex](onnx::InferenceContext &ctx) {
            checkFilterRank(ctx, filterIndex);
            if (infer)
              infer(ctx);
          });
    }
    return checked.get();
  }

private:
  /// The filter's input index of the operators with this flaw, or -1.
  static int filterInput(const std::string &opType, const std::string &domain) {
    if (!domain.empty() && domain != "ai.onnx")
      return -1;
    if (opType == "Conv" || opType == "ConvInteger" ||
        opType == "ConvTranspose")
      return 1;
    if (opType == "QLinearConv")
      return 3;
    return -1;
  }

  static void checkFilterRank(onnx::InferenceContext &ctx, int filterIndex) {
    if (ctx.getAttribute("kernel_shape") || !onnx::hasInputShape(ctx, 0) ||
        !onnx::hasInputShape(ctx, filterIndex))
      return;
    int inputRank = onnx::getInputShape(ctx, 0).dim_size();
    int filterRank = onnx::getInputShape(ctx, filterIndex).dim_size();
    if (inputRank != filterRank)
      fail_shape_inference("the filter has rank ", filterRank,
                           " but the input has rank ", inputRank,
                           "; they must be equal");
  }

  mutable std::map<const onnx::OpSchema *, std::unique_ptr<onnx::OpSchema>>
      checkedSchemas;
};

void applyBatchSize(onnx::ModelProto &model, int64_t batchSize) {
  llvm::StringSet<> initializers;
  for (const auto &init : model.graph().initializer())
    initializers.insert(init.name());
  for (auto &input : *model.mutable_graph()->mutable_input()) {
    if (initializers.count(input.name()) || !input.type().has_tensor_type())
      continue;
    auto *shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() > 0)
      shape->mutable_dim(0)->set_dim_value(batchSize);
  }
  // Outputs and intermediate shapes were inferred for the old batch size;
  // the initializers' entries (which carry exporters' metadata) do not
  // depend on it.
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
  for (auto &info : *model.mutable_graph()->mutable_value_info())
    if (initializers.count(info.name()))
      *kept.Add() = std::move(info);
  model.mutable_graph()->mutable_value_info()->Swap(&kept);
  for (auto &output : *model.mutable_graph()->mutable_output()) {
    auto *tensorType = output.mutable_type()->mutable_tensor_type();
    if (tensorType->has_shape() && tensorType->shape().dim_size() > 0)
      tensorType->mutable_shape()->mutable_dim(0)->set_dim_param("batch");
  }
}

} // namespace

std::string nodeDisplayName(const onnx::NodeProto &node, size_t index) {
  return node.name().empty() ? node.op_type() + "#" + std::to_string(index)
                             : node.name();
}

std::string loadModel(llvm::StringRef path, int64_t batchSize,
                      onnx::ModelProto &model, onnx::ModelProto *asRead) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/true);
  if (!buffer)
    return "cannot read the file: " + buffer.getError().message();
  bool text = llvm::sys::path::extension(path) == ".onnxtxt";
  if (text) {
    std::string message;
    // The parser reports most errors in its status but lets the standard
    // library's exceptions escape (std::stof on a float literal out of
    // range, such as alpha = 1e39).
    try {
      onnx::OnnxParser parser((*buffer)->getBufferStart());
      auto status = parser.Parse(model);
      if (!status.IsOK())
        message = status.ErrorMessage();
    } catch (const std::exception &e) {
      message = std::string("a literal cannot be read (") + e.what() + ")";
    }
    if (!message.empty()) {
      std::replace(message.begin(), message.end(), '\n', ' ');
      return "is not valid ONNX text: " + message;
    }
  } else if (std::string error = parseBinary(**buffer, model); !error.empty()) {
    return error;
  }

  int64_t opset = defaultDomainOpset(model);
  if (opset == 0)
    return "imports no opset of the default ONNX domain";
  if (int64_t maximum = newestOpset(); opset > maximum)
    return "uses opset " + std::to_string(opset) +
           "; fastnn supports opsets 11 to " + std::to_string(maximum) +
           " (re-export with opset_version=" + std::to_string(maximum) + ")";
  bool libonnxKnowsOpset = opset <= libonnxNewestOpset();
  // Before the checker, which probes the files external data names and
  // counts elements without checking for overflow.
  for (const auto &init : model.graph().initializer()) {
    if (std::string error = checkTensorDims(init); !error.empty())
      return error;
    if (init.data_location() == onnx::TensorProto::EXTERNAL)
      if (std::string error = checkExternalLocation(init); !error.empty())
        return error;
  }
  if (libonnxKnowsOpset) {
    try {
      if (text)
        onnx::checker::check_model(model);
      else
        onnx::checker::check_model(path.str());
    } catch (const std::exception &e) {
      std::string message = e.what();
      std::replace(message.begin(), message.end(), '\n', ' ');
      return "fails the ONNX checker: " + message;
    }
  }
  if (std::string error = checkGraphStructure(model.graph()); !error.empty())
    return error;
  if (std::string error = undefinedGraphOutput(model.graph()); !error.empty())
    return error;
  if (std::string error = nonPositiveWindowAttribute(model.graph());
      !error.empty())
    return error;
  if (asRead)
    *asRead = model;
  if (opset < kMinimumOpset) {
    try {
      model = onnx::version_conversion::ConvertVersion(model, kMinimumOpset);
    } catch (const std::exception &e) {
      return "cannot be converted from opset " + std::to_string(opset) +
             " to " + std::to_string(kMinimumOpset) + ": " + e.what();
    }
  }
  if (batchSize > 0)
    applyBatchSize(model, batchSize);
  // The importer infers every type itself; ONNX's shape inference checks the
  // model and gives the graph outputs' shapes, which the import compares.
  if (!libonnxKnowsOpset)
    return "";
  try {
    RankCheckedSchemaRegistry registry;
    onnx::shape_inference::InferShapes(model, &registry);
  } catch (const std::exception &e) {
    std::string message = e.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    return "fails ONNX shape inference: " + message;
  }
  return "";
}

} // namespace fastnn::onnx_import
