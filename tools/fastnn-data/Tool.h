//===- Tool.h - Shared pieces of the fastnn-data subcommands ----*- C++ -*-===//

#ifndef FASTNN_TOOLS_FASTNN_DATA_TOOL_H
#define FASTNN_TOOLS_FASTNN_DATA_TOOL_H

#include "fastnn/data/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fastnn::tool {

/// --key=value flags and positional arguments.
struct Args {
  std::map<std::string, std::string> Flags;
  std::vector<std::string> Positional;
  bool has(const std::string &K) const { return Flags.count(K) != 0; }
  std::string get(const std::string &K, const std::string &Default) const;
  data::Status getInt(const std::string &K, int64_t Default, int64_t Lo,
                      int64_t Hi, int64_t &Out) const;
  data::Status getDouble(const std::string &K, double Default, double Lo,
                         double Hi, double &Out) const;
  /// Fails on flags outside \p Known, suggesting nothing fancy.
  data::Status check(const std::vector<std::string> &Known) const;
};

/// A one-line progress bar on stderr, only when stderr is a terminal.
class Progress {
public:
  Progress(std::string Label, uint64_t Total, bool Enabled);
  ~Progress();
  void update(uint64_t Done);

private:
  std::string Label;
  uint64_t Total;
  bool Enabled;
  int LastPermille = -1;
};

int runConvert(const Args &A);
int runInspect(const Args &A);
int runBench(const Args &A);
int runIndex(const Args &A);

} // namespace fastnn::tool

#endif // FASTNN_TOOLS_FASTNN_DATA_TOOL_H
