// Questions a conformance program may be started again to answer in a fresh process: what the
// CUDA runtime reads only at a process's start (CUDA_VISIBLE_DEVICES), or what earlier cases in
// the same process would have changed (which primary contexts exist). The shared main knows
// nothing of CUDA, so a program registers each answering function here under a name, and the
// main calls it when started with kProbeArgument followed by that name. fresh_process.h starts
// such a process and reads what the answer printed.
#pragma once

#include <map>
#include <string>

namespace conformance {

inline constexpr const char* kProbeArgument = "--conformance-probe";

using ProbeAnswer = int (*)();   // prints its answer on stdout, returns the exit status

inline std::map<std::string, ProbeAnswer>& probe_answers() {
    static std::map<std::string, ProbeAnswer> answers;
    return answers;
}

inline bool register_probe(const std::string& name, ProbeAnswer answer) {
    probe_answers()[name] = answer;
    return true;
}

}  // namespace conformance
