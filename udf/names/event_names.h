// Event names as a diff keys them. Two runs of the same program differ in what is not the program:
// object addresses ("<function Module.forward at 0x7cc1a2b3c4d0>") and the line numbers of python
// frames ("torch/nn/modules/module.py(1501): _call_impl" after a torch upgrade). The diff report
// matches names with those taken out (diff's @normalize, on by default).
#pragma once

#include <string>
#include <string_view>

namespace tlsql {

// `name` with every hexadecimal address "0x..." (3 or more digits) written "0x?" and the line number
// of a python frame location ".py(123)" written ".py(?)". Other names come back unchanged.
std::string normalize_name(std::string_view name);

// HTA's shorten_name (use_short_name): a name holding template or argument lists without them,
// and without a return type; other names whole ("aten::mm", "Memcpy DtoH (Device -> Pinned)").
std::string short_name(const std::string& name);

}  // namespace tlsql
