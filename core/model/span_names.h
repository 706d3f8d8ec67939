// Names people can read: kernel names as profilers record them are mangled C++ symbols or whole template signatures
// ("void at::native::elementwise_kernel<128, 2, ...>(int, ...)", about 30 lines in a diagnostic). For display the
// name is demangled and shortened to the function's own name with its template arguments folded
// ("elementwise_kernel<…>"); the full name stays in the trace, the tooltip and the inspector.
#pragma once

#include <string>
#include <string_view>

namespace streamscope {

// The demangled name ("_Z..." symbols through the C++ ABI's demangler), else the name itself.
std::string demangledName(std::string_view name);

// The short display form: demangled, without return type, parameter list and enclosing namespaces or classes,
// template arguments folded to "<…>", and cut to at most maxChars characters with "…".
std::string shortSpanName(std::string_view name, size_t maxChars = 64);

} // namespace streamscope
