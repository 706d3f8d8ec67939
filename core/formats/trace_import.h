// The trace file formats' entry points moved to trace_formats.h (they export as well as import); this header is kept
// for the files that still include it by its old name.
#pragma once

#include "trace_formats.h"
