#include "hang_watch.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "mgpu/sim/nccl_control.h"
#include "runtime/program_clock.h"
#include "runtime/scheduler.h"
#include "runtime/trace_export.h"

namespace mgpu::sim::nccl {

namespace {

struct Waiter {
    int host_thread = 0;
    long os_thread = 0;
    std::string what;
    std::shared_ptr<Ticket> ticket;
};

// Guarded by the runtime's mutex.
std::vector<Waiter>& waiters() {
    static auto* list = new std::vector<Waiter>();
    return *list;
}

std::condition_variable_any& progress_signal() {
    static auto* signal = new std::condition_variable_any();
    return *signal;
}

long os_thread_id() { return static_cast<long>(syscall(SYS_gettid)); }

// How many threads the process has now; 0 when /proc cannot tell.
int process_threads() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
    return 0;
}

// Whether any thread other than the listed ones could still act: runnable, in uninterruptible
// I/O, stopped by a debugger or a signal. Only plain sleepers (S) and the dead cannot.
// Unknown when /proc cannot be read: then nothing counts as asleep.
bool another_thread_may_act(const std::set<long>& ignored) {
    std::error_code error;
    std::filesystem::directory_iterator tasks("/proc/self/task", error);
    if (error) return true;
    for (const auto& task : tasks) {
        const long id = std::atol(task.path().filename().c_str());
        if (ignored.count(id)) continue;
        std::ifstream stat(task.path() / "stat");
        std::string text;
        std::getline(stat, text);
        const std::size_t close = text.rfind(')');
        if (close == std::string::npos || close + 2 >= text.size()) return true;
        const char state = text[close + 2];
        if (state != 'S' && state != 'Z' && state != 'X' && state != 'I') return true;
    }
    return false;
}

const Waiter* waiter_of(int host_thread) {
    for (const Waiter& waiter : waiters())
        if (waiter.host_thread == host_thread) return &waiter;
    return nullptr;
}

std::string last_call_text(const ncclComm* comm) {
    if (comm == nullptr || comm->history.empty()) return "it has made no NCCL call on this communicator";
    const CallRecord& last = comm->history.back();
    std::string text = "its last NCCL call was " + last.text + " at " + where_text(last.site) + " (host thread " +
                       std::to_string(last.host_thread) + ")";
    if (const Waiter* waiter = waiter_of(last.host_thread))
        text += "; host thread " + std::to_string(last.host_thread) + " is waiting in " + waiter->what;
    return text;
}

std::string rank_label(const ncclComm* comm) {
    return "rank " + std::to_string(comm->rank) + " (device " + std::to_string(comm->device) + ")";
}

void describe_inits(std::ostringstream& out) {
    std::uint64_t number = 0;
    for (const auto& [id, joined] : registry().pending_inits) {
        if (joined.empty()) continue;
        ++number;
        const int nranks = joined.front().nranks;
        out << "  A communicator of " << nranks << " ranks being initialised (" << joined.front().api_name << "):\n";
        std::vector<bool> present(nranks, false);
        for (const InitRequest& request : joined) {
            present[request.rank] = true;
            out << "    rank " << request.rank << " (device " << request.comm->device << ") joined at "
                << where_text(request.site) << " (host thread " << request.host_thread << ") and waits\n";
        }
        std::string missing;
        int absent = 0;
        for (int rank = 0; rank < nranks; ++rank)
            if (!present[rank]) missing += (absent++ == 0 ? "" : ", ") + std::to_string(rank);
        out << (absent == 1 ? "    rank " : "    ranks ") << missing << " never called " << joined.front().api_name << " with this unique id\n";
    }
}

void describe_clique(std::ostringstream& out, const Clique& clique) {
    bool collective_pending = false;
    for (const auto& queue : clique.collectives) collective_pending |= !queue.empty();
    bool p2p_pending = false;
    for (const auto& [pair, queue] : clique.sends) p2p_pending |= !queue.empty();
    for (const auto& [pair, queue] : clique.recvs) p2p_pending |= !queue.empty();
    bool split_pending = false;
    for (const auto& split : clique.splits) split_pending |= static_cast<bool>(split);
    if (!collective_pending && !p2p_pending && !split_pending) return;
    out << "  comm#" << clique.id << " (" << clique.nranks << " ranks):\n";
    if (collective_pending) {
        const std::uint64_t next = clique.matched_collectives + 1;
        for (int rank = 0; rank < clique.nranks; ++rank) {
            const ncclComm* comm = clique.ranks[rank];
            const auto& queue = clique.collectives[rank];
            if (!queue.empty()) {
                const Posted& head = queue.front();
                out << "    " << rank_label(comm) << " posted collective #" << next << " " << describe(head.args)
                    << " at " << where_text(head.args.site) << " (host thread " << head.args.host_thread
                    << ") and waits for the other ranks\n";
            } else {
                out << "    " << rank_label(comm) << " has not called collective #" << next << "; "
                    << last_call_text(comm) << "\n";
            }
        }
    }
    for (const auto& [pair, queue] : clique.sends) {
        if (queue.empty()) continue;
        const Posted& send = queue.front();
        const ncclComm* receiver = clique.ranks[pair.second];
        out << "    rank " << pair.first << " posted " << describe(send.args) << " at " << where_text(send.args.site)
            << "; rank " << pair.second << " never posted the matching ncclRecv from rank " << pair.first << ": "
            << last_call_text(receiver) << "\n";
    }
    for (const auto& [pair, queue] : clique.recvs) {
        if (queue.empty()) continue;
        const Posted& recv = queue.front();
        const ncclComm* sender = clique.ranks[pair.first];
        out << "    rank " << pair.second << " posted " << describe(recv.args) << " at " << where_text(recv.args.site)
            << "; rank " << pair.first << " never posted the matching ncclSend to rank " << pair.second << ": "
            << last_call_text(sender) << "\n";
    }
    if (split_pending) {
        for (int rank = 0; rank < clique.nranks; ++rank) {
            if (clique.splits[rank])
                out << "    " << rank_label(clique.ranks[rank]) << " called ncclCommSplit at "
                    << where_text(clique.splits[rank]->site) << " and waits\n";
            else
                out << "    " << rank_label(clique.ranks[rank]) << " has not called ncclCommSplit; "
                    << last_call_text(clique.ranks[rank]) << "\n";
        }
    }
}

const char* result_name(int result) {
    static const char* names[] = {"ncclSuccess",       "ncclUnhandledCudaError", "ncclSystemError",
                                  "ncclInternalError", "ncclInvalidArgument",    "ncclInvalidUsage",
                                  "ncclRemoteError",   "ncclInProgress"};
    return result >= 0 && result < 8 ? names[result] : "an ncclResult_t";
}

// The first NCCL call of the program that failed (ncclInProgress is not a failure), if any: the
// ranks that carried on after it are what is left waiting, so it, not a missing send, is the cause.
const mgpu::trace::ApiCall* first_failed_nccl_call() {
    for (const auto& call : rt::runtime().trace.calls)
        if (call.name.rfind("nccl", 0) == 0 && call.result != ncclSuccess && call.result != ncclInProgress &&
            call.result != -1)
            return &call;
    return nullptr;
}

// Advice for the one mistake that hangs a single host thread: calls for several ranks made
// outside a group, each waiting for ranks that only this thread could reach.
std::string advice(bool single_thread) {
    if (const mgpu::trace::ApiCall* failed = first_failed_nccl_call()) {
        const std::string where_failed =
            failed->file.empty() ? std::string() : " at " + failed->file + ":" + std::to_string(failed->line);
        return "  An NCCL call failed before this: " + failed->text + where_failed + " returned " +
               result_name(failed->result) + " (" + std::to_string(failed->result) + ")" +
               (failed->reason.empty() ? std::string() : ": \"" + failed->reason + "\"") +
               ". The ranks that went on wait for ranks that stopped there: when an NCCL call fails, stop (close "
               "the group, return the error) instead of making the next call (lesson 4, section 4.7).\n";
    }
    bool outside_group = false;
    for (const Waiter& waiter : waiters()) outside_group |= waiter.what.rfind("ncclGroupEnd", 0) != 0;
    if (single_thread && outside_group)
        return "  One host thread that drives several ranks must make their calls (ncclCommInitRank, collectives, "
               "sends and receives) between ncclGroupStart() and ncclGroupEnd(): outside a group each call waits "
               "for the other ranks, which this thread then never reaches.\n";
    return "  Every rank of a communicator must make the same NCCL calls in the same order; a send needs the "
           "matching receive on its peer, posted in the same group when both sides wait.\n";
}

std::string state_report(bool single_thread, bool with_advice) {
    std::ostringstream out;
    for (const Waiter& waiter : waiters())
        out << "  host thread " << waiter.host_thread << " waits in " << waiter.what << "\n";
    describe_inits(out);
    for (const auto& clique : registry().cliques) describe_clique(out, *clique);
    if (with_advice) out << advice(single_thread);
    return out.str();
}

[[noreturn]] void stop_at_hang(bool single_thread) {
    stop_program(single_thread
                     ? "the only host thread is waiting for NCCL work that other ranks must post, and no other "
                       "thread exists to post it. On GPUs this program would hang here forever."
                     : "every host thread is waiting (in NCCL, or asleep) and no rank can make progress. On GPUs "
                       "this program would hang here forever.",
                 "");
}

// Looks every 50 ms; a verdict needs 20 looks in a row with waiters, no simulator progress and
// every other thread asleep.
void watch() {
    using namespace std::chrono_literals;
    rt::Runtime& r = rt::runtime();
    int quiet_looks = 0;
    std::uint64_t last_mark = 0;
    const long self = os_thread_id();
    for (;;) {
        std::this_thread::sleep_for(50ms);
        std::set<long> ignored{self};
        std::uint64_t mark = 0;
        {
            std::lock_guard<std::recursive_mutex> lock(r.mutex);
            if (waiters().empty()) {
                quiet_looks = 0;
                continue;
            }
            for (const Waiter& waiter : waiters()) ignored.insert(waiter.os_thread);
            mark = r.next_api_seq * 1000003u + registry().progress * 31u + waiters().size();
        }
        const bool may_act = another_thread_may_act(ignored);
        if (may_act || mark != last_mark) {
            quiet_looks = 0;
            last_mark = mark;
            continue;
        }
        if (++quiet_looks < 20) continue;
        std::lock_guard<std::recursive_mutex> lock(r.mutex);
        std::uint64_t now = r.next_api_seq * 1000003u + registry().progress * 31u + waiters().size();
        if (now != mark || waiters().empty()) {
            quiet_looks = 0;
            continue;
        }
        stop_at_hang(false);
    }
}

// One watcher per process: a child forked from a process that had one has none.
void start_watcher_once() {
    static pid_t started_in = 0;
    if (started_in == getpid()) return;
    started_in = getpid();
    std::thread([] {
        rt::mark_simulator_thread();
        watch();
    }).detach();
}

bool unmatched_work() {
    const Registry& reg = registry();
    for (const auto& [id, joined] : reg.pending_inits)
        if (!joined.empty()) return true;
    for (const auto& clique : reg.cliques) {
        for (const auto& queue : clique->collectives)
            if (!queue.empty()) return true;
        for (const auto* side : {&clique->sends, &clique->recvs})
            for (const auto& [pair, queue] : *side)
                if (!queue.empty()) return true;
        for (const auto& split : clique->splits)
            if (split) return true;
    }
    return false;
}

void report_unmatched_at_exit() {
    std::unique_lock<std::recursive_mutex> lock(rt::runtime().mutex, std::try_to_lock);
    if (!lock.owns_lock() || !unmatched_work()) return;
    stop_program("the program ended with NCCL work that the other ranks never matched (a rank that never made "
                 "the call, or a thread left waiting). On GPUs this program would not have ended.",
                 "");
}

}  // namespace

void note_poll_in_progress(const std::string& what) {
    static std::uint64_t progress_seen = ~std::uint64_t{0};
    static int stale_polls = 0;
    const std::uint64_t progress = registry().progress;
    if (progress != progress_seen) {
        progress_seen = progress;
        stale_polls = 0;
        return;
    }
    if (++stale_polls < kStalePollLimit || process_threads() != 1) return;
    stop_program("the only host thread keeps polling " + what +
                     " for a communicator that the other ranks never joined, and no other thread exists to join "
                     "it. On GPUs this loop would run forever.",
                 "");
}

void check_at_exit() {
    static pid_t registered_in = 0;
    if (registered_in == getpid()) return;
    registered_in = getpid();
    std::atexit(report_unmatched_at_exit);
}

void notify_progress() { progress_signal().notify_all(); }

void wait_for(const std::shared_ptr<Ticket>& ticket, const std::string& what) {
    if (ticket->outstanding == 0) return;
    rt::Runtime& r = rt::runtime();
    waiters().push_back(Waiter{rt::host_thread_id(), os_thread_id(), what, ticket});
    if (process_threads() == 1) stop_at_hang(true);
    start_watcher_once();
    while (ticket->outstanding > 0) progress_signal().wait(r.mutex);
    auto& list = waiters();
    for (auto it = list.begin(); it != list.end(); ++it)
        if (it->ticket == ticket) {
            list.erase(it);
            break;
        }
}

namespace {

StopHandler& stop_handler() {
    static StopHandler handler = nullptr;
    return handler;
}

std::string first_stuck_text() {
    const auto& stuck = rt::runtime().stuck_ops;
    return stuck.empty() ? std::string("a failed NCCL operation") : stuck.begin()->second;
}

constexpr const char* kStuckAdvice =
    " A failed NCCL operation never completes on the GPU: wait by polling cudaStreamQuery and "
    "ncclCommGetAsyncError, and call ncclCommAbort on every communicator when an error shows (lesson 4, section 4.7).";

}  // namespace

void fail_asynchronously(Clique& clique, const std::string& what) {
    for (ncclComm* comm : clique.ranks) {
        if (comm == nullptr) continue;
        comm->async_error = ncclRemoteError;
        set_last_error(comm, what + " failed on the GPU: a remote peer stopped answering (ncclRemoteError); "
                                    "the operation will not complete until the communicator is aborted");
    }
    rt::Runtime& r = rt::runtime();
    r.on_wait_forever = [](const std::string& waiting) {
        stop_program(waiting + " waits for work queued behind " + first_stuck_text() +
                         ", which failed on the GPU (ncclRemoteError) and never finishes. On GPUs this program "
                         "would hang here." + kStuckAdvice,
                     "", false);
    };
    r.on_stuck_poll = [](const std::string& polling) {
        static std::uint64_t polls = 0;
        static std::uint64_t generation = 0;
        if (generation != rt::runtime().generation) {
            generation = rt::runtime().generation;
            polls = 0;
        }
        if (++polls < static_cast<std::uint64_t>(kStalePollLimit) || process_threads() != 1) return;
        stop_program("the only host thread keeps polling " + polling + " for a stream stuck behind " +
                         first_stuck_text() + ", which failed on the GPU (ncclRemoteError) and never finishes. On "
                         "GPUs this loop would run forever." + kStuckAdvice,
                     "", false);
    };
}

void release_failed(ncclComm* comm) {
    for (std::uint64_t op : comm->stuck_ops) rt::release_stuck(op, rt::host_clock());
    comm->stuck_ops.clear();
}

void stop_program(const std::string& headline, const std::string& details, bool with_advice) {
    const bool single_thread = process_threads() <= 2;
    std::string text = "mgpu-sim: NCCL: " + headline + "\n" + details + state_report(single_thread, with_advice);
    if (stop_handler() != nullptr) stop_handler()(text);
    std::fflush(stdout);
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
    rt::export_trace_now_if_asked();
    std::_Exit(kHangExitStatus);
}

}  // namespace mgpu::sim::nccl

void mgpu::sim::set_nccl_stop_handler(StopHandler handler) { nccl::stop_handler() = handler; }
