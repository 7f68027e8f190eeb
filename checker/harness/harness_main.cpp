// main of every lesson's checker binary. Options of its own (all optional, given by the judge):
//   --mgpu-result-fd=N   write sealed records there (record_seal.h) and use the mgpu-judge reporter
//   --mgpu-key-fd=N      read the run's key from this descriptor (a pipe), then close it
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

}  // namespace

int main(int argc, char** argv) {
    std::vector<char*> doctest_args{argv[0]};
    int key_fd = -1;
    for (int i = 0; i < argc; ++i) settings().argv.emplace_back(argv[i]);
    for (int i = 1; i < argc; ++i) {
        std::string value;
        if (take_option(argv[i], "--mgpu-result-fd=", &value)) {
            settings().result_fd = std::atoi(value.c_str());
        } else if (take_option(argv[i], "--mgpu-key-fd=", &value)) {
            key_fd = std::atoi(value.c_str());
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
    if (key_fd >= 0) mgpu::check::detail::take_channel_key(key_fd);

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
