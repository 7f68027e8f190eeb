#include "result_channel.h"

#include <cerrno>
#include <unistd.h>

namespace mgpu::check::detail {

RunSettings& settings() {
    static RunSettings run_settings;
    return run_settings;
}

bool judge_attached() { return settings().result_fd >= 0; }

void send(nlohmann::json record) {
    if (!judge_attached()) return;
    record["nonce"] = settings().nonce;
    // A student's stray partial line on this descriptor must not swallow our record: start on a
    // fresh line. An empty line is ignored by the judge.
    std::string line(1, '\n');
    line += record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    line += '\n';
    const char* data = line.data();
    std::size_t left = line.size();
    while (left > 0) {
        ssize_t written = ::write(settings().result_fd, data, left);
        if (written < 0) {
            if (errno == EINTR) continue;
            return;   // the judge then sees no verdict, which is what a closed channel means
        }
        data += written;
        left -= static_cast<std::size_t>(written);
    }
}

CaseState& current_case() {
    static CaseState state;
    return state;
}

void begin_case(const std::string& name) {
    current_case() = CaseState{};
    current_case().name = name;
}

}  // namespace mgpu::check::detail
