// Host threads waiting on NCCL, and the hangs among them. A thread that launched NCCL work
// waits here (without the runtime's lock) until every rank it needs has posted its part. When
// no thread can ever post it, the program is stopped with a diagnosis instead of hanging:
// at once when the waiting thread is the only thread of the process, and otherwise when every
// other thread sleeps in the kernel (none runnable) and nothing changes in the simulator while
// a watcher looks for a second. A busy machine only delays that verdict: a thread that is
// computing is runnable however long it waits for a core.
#pragma once

#include <memory>
#include <string>

#include "comm_state.h"

namespace mgpu::sim::nccl {

// Exit status of a program stopped at a hang or at a mismatch between ranks.
inline constexpr int kHangExitStatus = 3;

// Blocks the calling thread until ticket->outstanding is 0. `what` names the call it waits in
// ("ncclGroupEnd at main.cu:40"). The caller holds the runtime's lock once.
void wait_for(const std::shared_ptr<Ticket>& ticket, const std::string& what);

// Called by every ncclCommGetAsyncError that answers ncclInProgress. A lone thread that keeps
// polling while nothing is posted anywhere polls forever: after kStalePollLimit such polls in a
// row the program is stopped with the diagnosis. Counted in calls, never in time.
inline constexpr int kStalePollLimit = 100000;
void note_poll_in_progress(const std::string& what);

// Arranges (once per process) for the program's end to be checked: work some rank posted and
// the others never matched is reported, and the exit status becomes kHangExitStatus.
void check_at_exit();

// Wakes the waiting threads after posted work was matched.
void notify_progress();

// An operation of the clique failed on the GPU (an injected fault, Faults::nccl_fails_at): every
// rank reports ncclRemoteError as its asynchronous error, and a host thread that would wait for the
// operation, or keeps polling a stream stuck behind it, is stopped with a diagnosis instead of
// waiting forever. `what` describes the operation.
void fail_asynchronously(Clique& clique, const std::string& what);

// Ends the comm's parts of a failed operation at the caller's time (ncclCommAbort).
void release_failed(ncclComm* comm);

// Prints the diagnosis (headline, the waiting threads and every communicator with posted work
// that is not matched, then `details`), writes the trace when asked, and ends the process.
// `with_advice` adds what usually causes a hang; a headline that names its own cause and remedy
// goes without it.
[[noreturn]] void stop_program(const std::string& headline, const std::string& details, bool with_advice = true);

}  // namespace mgpu::sim::nccl
