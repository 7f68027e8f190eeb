// main of every lesson's checker binary. Options of its own (all optional, given by the judge):
//   --mgpu-result-fd=N   write nonce-carrying records there and use the mgpu-judge reporter
//   --mgpu-nonce-fd=N    read the run's nonce from this descriptor (a pipe), then close it
//   --mgpu-seed=N        seed for random inputs
//   --mgpu-topology=T    restrict scenarios to one machine (other cases skip themselves)
// Everything else goes to doctest (-ltc, -tc=..., -cs, ...).
#define DOCTEST_CONFIG_IMPLEMENT
// The simulator catches its own SIGSEGV to model device memory faults; doctest's signal
// handlers would replace it. Crashes are the judge's business: it sees how the process ended.
#define DOCTEST_CONFIG_NO_POSIX_SIGNALS
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

#include "result_channel.h"

namespace {

using mgpu::check::detail::settings;

bool take_option(const char* argument, const char* name, std::string* value) {
    const std::size_t length = std::strlen(name);
    if (std::strncmp(argument, name, length) != 0) return false;
    *value = argument + length;
    return true;
}

std::string read_nonce(int fd) {
    std::string nonce;
    char buffer[128];
    for (;;) {
        ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got <= 0 || nonce.size() > 256) break;
        nonce.append(buffer, static_cast<std::size_t>(got));
    }
    ::close(fd);
    while (!nonce.empty() && (nonce.back() == '\n' || nonce.back() == '\r')) nonce.pop_back();
    return nonce;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<char*> doctest_args{argv[0]};
    int nonce_fd = -1;
    for (int i = 0; i < argc; ++i) settings().argv.emplace_back(argv[i]);
    for (int i = 1; i < argc; ++i) {
        std::string value;
        if (take_option(argv[i], "--mgpu-result-fd=", &value)) {
            settings().result_fd = std::atoi(value.c_str());
        } else if (take_option(argv[i], "--mgpu-nonce-fd=", &value)) {
            nonce_fd = std::atoi(value.c_str());
        } else if (take_option(argv[i], "--mgpu-seed=", &value)) {
            settings().seed = std::strtoull(value.c_str(), nullptr, 10);
        } else if (take_option(argv[i], "--mgpu-topology=", &value)) {
            settings().topology = value;
        } else if (take_option(argv[i], "--mgpu-restarted", &value)) {
            settings().restarted = true;
        } else {
            doctest_args.push_back(argv[i]);
        }
    }
    if (nonce_fd >= 0) settings().nonce = read_nonce(nonce_fd);

    doctest::Context context;
    context.applyCommandLine(static_cast<int>(doctest_args.size()), doctest_args.data());
    if (mgpu::check::detail::judge_attached()) {
        context.setOption("reporters", "mgpu-judge");
        context.setOption("no-intro", true);
        context.setOption("no-version", true);
    }
    const int status = context.run();

    // Leave now: exit handlers and static destructors could run code the checker did not write.
    mgpu::check::detail::send(nlohmann::json{{"event", "exit"}, {"status", status}});
    std::fflush(nullptr);
    ::_exit(status == 0 ? 0 : 1);
}
