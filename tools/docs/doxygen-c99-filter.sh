#!/usr/bin/env bash
# Doxygen INPUT_FILTER for include/cursus.h (tools/docs/Doxyfile): cbindgen
# writes its doc comments C99-style (`// ...`, ffi-c/cbindgen.toml), which
# Doxygen does not read as documentation. Turns them into `///` and makes
# the opening comment the file's documentation, with a brief line first
# (so a warning's line number is the header's plus 3). The header itself is
# unchanged.
exec sed -e '1s#^/\* \([^ ]*\): #/** @file \1\n * @brief libcursus: the C ABI of the Cursus engine.\n *\n * #' \
  -e 's#^\( *\)// #\1/// #; s#^\( *\)//$#\1///#' "$1"
