// Malformed machine files: each one fails with a message naming the file and the field.
#include <string>

#include <doctest/doctest.h>

#include "mgpu/sim/machine.h"
#include "temp_files.h"

using namespace mgpu::sim;

namespace {

// The message load_machine gives for `text` saved as `name`, with the file's path replaced by
// "FILE" so that expectations read like the messages students see.
std::string error_for(const TempFolder& folder, const std::string& name, const std::string& text)
{
    const std::string path = folder.write(name, text);
    try {
        load_machine(path);
    } catch (const TopologyError& e) {
        std::string message = e.what();
        const auto at = message.find(path);
        if (at == std::string::npos) return "(the message does not name the file) " + message;
        return message.replace(at, path.size(), "FILE");
    }
    return "(no error)";
}

const char* const kTwoH200Devices = R"("devices": [{"preset": "h200"}, {"preset": "h200"}])";

std::string two_gpu_file(const std::string& extra)
{
    return std::string("{\"name\": \"t\", ") + kTwoH200Devices + (extra.empty() ? "" : ", " + extra) + "}";
}

}  // namespace

TEST_CASE("a field of the wrong type names its path and the value given")
{
    TempFolder folder;
    CHECK(error_for(folder, "count.json", R"({"name": "t", "devices": [{"preset": "h200"},
        {"name": "X", "total_mem": 1000000000, "sm_count": "many", "major": 8, "minor": 0}]})") ==
          R"(FILE: devices[1].sm_count: expected a positive integer, got "many")");
    CHECK(error_for(folder, "cost.json", two_gpu_file(R"("cost": {"h2d_pinned_gbps": -1})")) ==
          "FILE: cost.h2d_pinned_gbps: expected a positive number, got -1");
    CHECK(error_for(folder, "bus.json", R"({"name": "t", "devices": [{"preset": "h200", "pci_bus": 300}]})") ==
          "FILE: devices[0].pci_bus: expected an integer from 0 to 255, got 300");
    CHECK(error_for(folder, "peer.json", two_gpu_file(R"("links": [{"from": 0, "to": 1, "type": "nvlink", "can_peer": "yes"}])")) ==
          R"(FILE: links[0].can_peer: expected true or false, got "yes")");
    CHECK(error_for(folder, "devs.json", R"({"name": "t", "devices": {"preset": "h200"}})") ==
          "FILE: devices: expected a list [...], got an object");
    CHECK(error_for(folder, "dims.json", R"({"name": "t", "devices": [{"preset": "h200", "max_threads_dim": [1024, 64]}]})") ==
          "FILE: devices[0].max_threads_dim: expected a list of 3 positive integers [x, y, z], got a list");
    CHECK(error_for(folder, "top.json", "[1, 2]") == "FILE: expected an object {...}, got a list");
}

TEST_CASE("a link to a device that does not exist says how many there are")
{
    TempFolder folder;
    CHECK(error_for(folder, "to.json", two_gpu_file(R"("links": [{"from": 0, "to": 5, "type": "nvlink"}])")) ==
          "FILE: links[0].to: device 5 does not exist (the machine has 2 devices)");
    CHECK(error_for(folder, "self.json", two_gpu_file(R"("links": [{"from": 1, "to": 1, "type": "pcie"}])")).find(
              "FILE: links[0]: \"from\" and \"to\" are both 1") == 0);
    CHECK(error_for(folder, "twice.json", two_gpu_file(R"("links": [{"from": 0, "to": 1, "type": "nvlink"},
                                                                     {"from": 1, "to": 0, "type": "nvlink"}])"))
              .find("FILE: links[1]: the pair 1 -> 0 is already described by links[0]") == 0);
}

TEST_CASE("unknown keys are errors, with a suggestion when one is close")
{
    TempFolder folder;
    CHECK(error_for(folder, "key.json", R"({"name": "t", "devices": [{"preset": "h200", "sm_cout": 4}]})") ==
          R"(FILE: devices[0].sm_cout: unknown key "sm_cout" (did you mean "sm_count"?))");
    CHECK(error_for(folder, "top.json", R"({"name": "t", "devcies": []})") ==
          R"(FILE: devcies: unknown key "devcies" (did you mean "devices"?))");
    const std::string far = error_for(folder, "far.json", R"({"name": "t", "gpus": 2})");
    CHECK(far.find(R"(FILE: gpus: unknown key "gpus"; the keys allowed here are name, description)") == 0);
    CHECK(error_for(folder, "type.json", two_gpu_file(R"("links": [{"from": 0, "to": 1, "type": "nvlnk"}])")) ==
          R"(FILE: links[0].type: unknown link type "nvlnk" (did you mean "nvlink"?); use nvlink, pcie or none)");
    CHECK(error_for(folder, "preset.json", R"({"name": "t", "devices": [{"preset": "h100"}]})") ==
          R"(FILE: devices[0].preset: unknown device preset "h100" (did you mean "h200"?); use h200, a100-sxm4-80gb or l4)");
}

TEST_CASE("missing things are named")
{
    TempFolder folder;
    CHECK(error_for(folder, "noname.json", R"({"devices": []})") == "FILE: name: missing; every machine file names its machine");
    CHECK(error_for(folder, "nodevices.json", R"({"name": "t"})").find("FILE: devices: missing") == 0);
    CHECK(error_for(folder, "partial.json", R"({"name": "t", "devices": [{"name": "X", "sm_count": 4}]})").find(
              "FILE: devices[0].total_mem: missing; a device without \"preset\" needs name, total_mem") == 0);

    const std::string absent = folder.path_of("absent.json");
    try {
        load_machine(absent);
        FAIL("expected a TopologyError");
    } catch (const TopologyError& e) {
        CHECK(std::string(e.what()) == "cannot open topology file \"" + absent + "\": No such file or directory");
    }
}

TEST_CASE("invalid JSON gives the line and column")
{
    TempFolder folder;
    // Line 4 lacks the comma before "links": the parser stops after reading that key's closing
    // quote, the 9th character of the line.
    const std::string message = error_for(folder, "syntax.json",
                                          "{\n"
                                          "  \"name\": \"t\",\n"
                                          "  \"devices\": [{\"preset\": \"h200\"}]\n"
                                          "  \"links\": []\n"
                                          "}\n");
    CHECK(message.find("FILE: invalid JSON at line 4, column 9: ") == 0);
    CHECK(message.find("last read") == std::string::npos);
    CHECK(error_for(folder, "empty.json", "").find("FILE: invalid JSON at line 1, column 1: ") == 0);
}

TEST_CASE("values that contradict each other")
{
    TempFolder folder;
    CHECK(error_for(folder, "free.json", R"({"name": "t", "devices": [{"preset": "h200", "total_mem": 1000, "free_mem": 2000}]})") ==
          "FILE: devices[0].free_mem: 2000 bytes is more than total_mem (1000 bytes)");
    CHECK(error_for(folder, "dup.json", R"({"name": "t", "devices": [{"preset": "h200", "sm_count": 1, "sm_count": 2}]})")
              .find("FILE: devices[0].sm_count: appears twice") == 0);
    CHECK(error_for(folder, "nodriver.json", R"({"name": "t", "has_driver": false, "devices": [{"preset": "h200"}]})")
              .find("FILE: devices: a machine without a driver") == 0);
    CHECK(error_for(folder, "uuid.json", R"({"name": "t", "devices": [{"preset": "h200", "uuid": "GPU-1234"}]})")
              .find("FILE: devices[0].uuid: expected the form GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx") == 0);
    CHECK(error_for(folder, "samebus.json", R"({"name": "t", "devices": [{"preset": "h200", "pci_bus": 24},
                                                                            {"preset": "h200", "pci_bus": 24}]})")
              .find("FILE: devices[1]: PCI address 0000:18:06.0 is already taken by devices[0]") == 0);
    CHECK(error_for(folder, "none.json", two_gpu_file(R"("links": [{"from": 0, "to": 1, "type": "none", "can_peer": true}])"))
              .find("FILE: links[0].can_peer: devices with no link between them") == 0);
}

TEST_CASE("the matrix form checks its shape and its diagonal")
{
    TempFolder folder;
    CHECK(error_for(folder, "rows.json", two_gpu_file(R"("links": {"matrix": [["X", "NV18"], ["NV18", "X"], ["SYS", "SYS"]]})")) ==
          "FILE: links.matrix: expected 2 rows (one per device), got 3 rows");
    CHECK(error_for(folder, "cell.json", two_gpu_file(R"("links": {"matrix": [["X", "NV18"], ["phb", "X"]]})"))
              .find(R"(FILE: links.matrix[1][0]: unknown link label "phb" (did you mean "PHB"?))") == 0);
    CHECK(error_for(folder, "diag.json", two_gpu_file(R"("links": {"matrix": [["X", "NV18"], ["NV18", "X"]],
                                                                    "can_peer": [[true, true], [true, false]]})")) ==
          "FILE: links.can_peer[0][0]: a device is never its own peer: write false on the diagonal");
}
