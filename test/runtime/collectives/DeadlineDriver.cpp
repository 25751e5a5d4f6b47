//===- DeadlineDriver.cpp - one collective, one worker late ---------------===//
//
// Run by check_deadline.py under mpirun: every worker sets the deadline and
// step given, the worker --late sleeps --sleep seconds (a worker busy past
// the deadline), then all enter one collective (--collective broadcast,
// allreduce, or the barrier of fnn_comm_finalize) and exit 0 if it
// completes.
//
//===----------------------------------------------------------------------===//

#include "fastnn/runtime/abi.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

int main(int argc, char **argv) {
  if (fnn_comm_init(&argc, &argv) != 0) {
    std::fprintf(stderr, "%s\n", fnn_last_error());
    return 1;
  }
  double Deadline = 0, Sleep = 0;
  int64_t Late = -1, Step = -1;
  std::string Collective = "broadcast";
  for (int I = 1; I + 1 < argc; I += 2) {
    std::string Flag = argv[I], Value = argv[I + 1];
    if (Flag == "--deadline")
      Deadline = std::atof(Value.c_str());
    else if (Flag == "--sleep")
      Sleep = std::atof(Value.c_str());
    else if (Flag == "--late")
      Late = std::atoll(Value.c_str());
    else if (Flag == "--step")
      Step = std::atoll(Value.c_str());
    else if (Flag == "--collective")
      Collective = Value;
    else {
      std::fprintf(stderr, "unknown flag %s\n", Flag.c_str());
      return 2;
    }
  }
  fnn_comm_set_deadline(Deadline);
  fnn_comm_set_step(Step);
  if (fnn_comm_rank() == Late)
    std::this_thread::sleep_for(std::chrono::duration<double>(Sleep));
  int64_t Values[4] = {fnn_comm_rank(), 1, 2, 3};
  int64_t Result = 0;
  if (Collective == "broadcast")
    Result = fnn_comm_broadcast(Values, sizeof(Values), 0);
  else if (Collective == "allreduce")
    Result = fnn_comm_allreduce_sum(Values, 4, FNN_I64);
  if (Result != 0) {
    std::fprintf(stderr, "%s\n", fnn_last_error());
    return 1;
  }
  fnn_comm_finalize();
  return 0;
}
