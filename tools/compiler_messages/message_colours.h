// Colours for compiler messages on a terminal, as g++ gives them: the compiler itself is asked for
// plain text, because its messages are rewritten (compiler_messages.h) before they are shown.
#pragma once

#include <string>

namespace mgpu::messages {

// `messages` with g++'s colours: the location in bold, "error:" red, "warning:" magenta,
// "note:" cyan, the caret lines green.
std::string with_colours(const std::string& messages);

}  // namespace mgpu::messages
