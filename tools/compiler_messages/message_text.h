// The text of one compiler message with the simulator's names taken out: the hidden call-site
// parameter of the API's signatures, the launcher that a kernel launch becomes, the names cu2cpp
// gives __device__ variables. Locations are not touched here.
#pragma once

#include <string>

namespace mgpu::messages {

struct MessageText {
    std::string text;
    // How many parameters the simulator added in front of what the student wrote (a launch: its
    // name, site and configuration) or behind it (the call site): argument numbers and counts in
    // the notes that follow are shifted back by these.
    int hidden_before = 0;
    int hidden_after = 0;
};

// `text` as nvcc's headers would have made it read. `hidden_before`/`hidden_after` from the
// candidate the message is about, when a count in it ("candidate expects 4 arguments") needs them.
MessageText without_simulator_names(const std::string& text, int hidden_before = 0, int hidden_after = 0);

}  // namespace mgpu::messages
