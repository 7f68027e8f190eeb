// What `mgpu topo` prints.
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "mgpu/sim/machine.h"

using namespace mgpu::sim;

namespace {

std::vector<std::string> lines_of(const std::string& text)
{
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// The words of the row that starts with `first` in the section that follows the line
// starting with `heading`.
std::vector<std::string> row(const std::string& text, const std::string& heading, const std::string& first)
{
    bool in_section = false;
    for (const auto& line : lines_of(text)) {
        if (line.rfind(heading, 0) == 0) in_section = true;
        // Rows start after a two-space indent; a table's header row starts with blanks.
        if (!in_section || line.rfind("  " + first, 0) != 0) continue;
        std::istringstream words(line);
        std::vector<std::string> out;
        for (std::string w; words >> w;) out.push_back(w);
        if (!out.empty() && out[0] == first) return out;
    }
    return {};
}

void check_tidy(const std::string& text)
{
    REQUIRE_FALSE(text.empty());
    CHECK(text.back() == '\n');
    CHECK(text.find("\n\n\n") == std::string::npos);
    CHECK(text.substr(text.size() - 2) != "\n\n");
    for (const auto& line : lines_of(text)) {
        CAPTURE(line);
        CHECK((line.empty() || (line.back() != ' ' && line.back() != '\t')));
    }
}

}  // namespace

TEST_CASE("h200: one device, its properties on one line")
{
    const std::string text = describe_machine(load_machine("h200"));
    check_tidy(text);
    CHECK(text.rfind("Machine h200", 0) == 0);
    CHECK(row(text, "Links", "GPU0") == std::vector<std::string>{"GPU0", "X"});
    // 150109880320 bytes / 2^30 = 139.80 GiB.
    CHECK(row(text, "Devices", "GPU0") ==
          std::vector<std::string>{"GPU0", "NVIDIA", "H200", "139.8", "GiB", "132", "SMs", "compute", "capability", "9.0",
                                   "PCI", "0000:00:06.0"});
}

TEST_CASE("hgx-h200-8: NV18 everywhere and every ordered pair can peer")
{
    const std::string text = describe_machine(load_machine("hgx-h200-8"));
    check_tidy(text);
    CHECK(row(text, "Links", "GPU0") ==
          std::vector<std::string>{"GPU0", "X", "NV18", "NV18", "NV18", "NV18", "NV18", "NV18", "NV18"});
    CHECK(row(text, "Links", "GPU7") ==
          std::vector<std::string>{"GPU7", "NV18", "NV18", "NV18", "NV18", "NV18", "NV18", "NV18", "X"});
    CHECK(row(text, "Peer access", "GPU3") ==
          std::vector<std::string>{"GPU3", "OK", "OK", "OK", "X", "OK", "OK", "OK", "OK"});
    CHECK_FALSE(row(text, "Legend", "NV#").empty());
    CHECK_FALSE(row(text, "Legend", "OK").empty());
    CHECK(row(text, "Legend", "NS").empty());   // only labels that appear are explained
    CHECK(row(text, "Legend", "PIX").empty());
    CHECK(row(text, "Devices", "GPU4").back() == "0000:9A:00.0");
}

TEST_CASE("islands-2x2: NVLink within a pair, SYS and no peer access across")
{
    const std::string text = describe_machine(load_machine("islands-2x2"));
    check_tidy(text);
    CHECK(row(text, "Links", "GPU1") == std::vector<std::string>{"GPU1", "NV18", "X", "SYS", "SYS"});
    CHECK(row(text, "Peer access", "GPU2") == std::vector<std::string>{"GPU2", "NS", "NS", "X", "OK"});
    CHECK_FALSE(row(text, "Legend", "SYS").empty());
    CHECK_FALSE(row(text, "Legend", "NS").empty());
}

TEST_CASE("mixed-3: each device line shows its own board")
{
    const std::string text = describe_machine(load_machine("mixed-3"));
    check_tidy(text);
    const auto a100 = row(text, "Devices", "GPU1");
    const auto l4 = row(text, "Devices", "GPU2");
    // 85100068864 / 2^30 = 79.26 GiB; 23612293120 / 2^30 = 21.99 GiB.
    CHECK(a100 == std::vector<std::string>{"GPU1", "NVIDIA", "A100-SXM4-80GB", "79.3", "GiB", "108", "SMs", "compute",
                                          "capability", "8.0", "PCI", "0000:68:00.0"});
    CHECK(l4 == std::vector<std::string>{"GPU2", "NVIDIA", "L4", "22.0", "GiB", "58", "SMs", "compute", "capability",
                                        "8.9", "PCI", "0000:B3:00.0"});
    CHECK(row(text, "Links", "GPU0") == std::vector<std::string>{"GPU0", "X", "NODE", "SYS"});
}

TEST_CASE("no driver and no visible devices say which error code the program will see")
{
    const std::string none = describe_machine(load_machine("none"));
    check_tidy(none);
    CHECK(none.find("35") != std::string::npos);
    CHECK(none.find("GPU0") == std::string::npos);

    const std::string hidden = describe_machine(apply_visible_devices(load_machine("h200"), ""));
    check_tidy(hidden);
    CHECK(hidden.find("100") != std::string::npos);
    CHECK(hidden.find("CUDA_VISIBLE_DEVICES") != std::string::npos);
}

TEST_CASE("after CUDA_VISIBLE_DEVICES the devices say which board they are")
{
    const std::string text = describe_machine(apply_visible_devices(load_machine("hgx-h200-8"), "3,1"));
    check_tidy(text);
    CHECK(row(text, "Devices", "GPU0").back() == "0000:5D:00.0");
    CHECK(text.find("GPU0 is the machine's GPU3, GPU1 is the machine's GPU1") != std::string::npos);
}
