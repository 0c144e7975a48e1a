// Text bound for a terminal. A trace's names (and a folder's file names, a database's table
// names) can hold control characters: ESC sequences that move the cursor, retitle the window,
// rewrite the screen or, with OSC 52, the clipboard. A terminal obeys them, so every line tlsql
// prints for a person goes through one filter here; a file or pipe gets the bytes as they are.
// In src/ because every layer prints something (udf/replay's notes, the shell's messages).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace tlsql {

// The filter: control characters shown instead of obeyed. C0 as ^@ .. ^_ (ESC as ^[), DEL as ^?,
// C1 (U+0080 .. U+009F) as \u0080 .., and a byte that is not UTF-8 as \xNN. Tab and newline stay
// when `keep_lines`. Used on every text that reaches a terminal: cells and names (output.cpp),
// and every message and listing through say().
std::string show_controls(std::string_view s, bool keep_lines = true);
// Whether `f` is a terminal.
bool is_terminal(FILE* f);
// Whether `s` holds anything show_controls would change (a control character, or bytes that are
// not UTF-8): tab completion never offers such a word.
bool has_controls(std::string_view s);

// The one way a message or listing (anything but result rows, which output.cpp filters per cell)
// reaches stdout or stderr: on a terminal through show_controls, else as it is. tlsql's own
// control sequences (a progress bar's "\r", "\033[K") are written beside it, never through it.
void say(FILE* f, std::string_view text);

}  // namespace tlsql
