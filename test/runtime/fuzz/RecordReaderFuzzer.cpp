//===- RecordReaderFuzzer.cpp - libFuzzer target for TFRecord framing -----===//
//
// The first byte picks the compression; the rest is the file. Every record
// is also parsed as a tf.Example, as the pipeline would.
//
//===----------------------------------------------------------------------===//

#include "fastnn/data/DatasetSpec.h"
#include "fastnn/data/RecordIO.h"

using namespace fastnn::data;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size < 1)
    return 0;
  RecordReaderOptions O;
  O.Comp = static_cast<Compression>(Data[0] % 3);
  O.MaxRecordBytes = 1 << 20;
  auto R = RecordReader::openMemory("fuzz.tfrecord", Data + 1, Size - 1, O);
  static DatasetSpec Spec = [] {
    DatasetSpec S;
    builtinDatasetSpec("mnist", S);
    return S;
  }();
  std::string Rec;
  Example E;
  for (int I = 0; I < 10000; ++I) {
    Status S;
    auto Res = R->next(Rec, S);
    if (Res == RecordReader::Result::End)
      break;
    if (Res == RecordReader::Result::Corrupt) {
      if (S.message().find("fuzz.tfrecord: ") != 0)
        __builtin_trap(); // Every error names the file.
      if (!R->canContinue())
        break;
      continue;
    }
    SampleView V;
    if (parseExample(Rec, E).ok())
      (void)extractSample(E, Spec, V);
  }
  return 0;
}
