# CMake package of libcursus: find_package(cursus) gives
#   cursus::cursus     the C library (cursus.h)
#   cursus::cursus++   the C++17 wrapper (cursus.hpp) over it
# Paths are relative to this file, so the installation may be moved.
get_filename_component(_cursus_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

if(NOT TARGET cursus::cursus)
  add_library(cursus::cursus SHARED IMPORTED)
  set_target_properties(cursus::cursus PROPERTIES
    IMPORTED_LOCATION "${_cursus_prefix}/lib/libcursus.so"
    IMPORTED_SONAME "libcursus.so.${cursus_ABI}"
    INTERFACE_INCLUDE_DIRECTORIES "${_cursus_prefix}/include")
  find_package(Threads REQUIRED)
  set_property(TARGET cursus::cursus APPEND PROPERTY INTERFACE_LINK_LIBRARIES Threads::Threads ${CMAKE_DL_LIBS} m)
endif()

if(NOT TARGET cursus::cursus++)
  add_library(cursus::cursus++ INTERFACE IMPORTED)
  set_target_properties(cursus::cursus++ PROPERTIES INTERFACE_LINK_LIBRARIES cursus::cursus)
  target_compile_features(cursus::cursus++ INTERFACE cxx_std_17)
endif()

unset(_cursus_prefix)
