# CMake package of libcursus: find_package(cursus) gives
#   cursus::cursus     the C library (cursus.h)
#   cursus::cursus++   the C++17 wrapper (cursus.hpp) over it
# Paths are relative to this file, so the installation may be moved.
get_filename_component(_cursus_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
# The SONAME's ABI version: major.minor before 1.0, then the major
# (cursus_VERSION comes from cursusConfigVersion.cmake).
if(cursus_VERSION_MAJOR EQUAL 0)
  set(_cursus_abi "0.${cursus_VERSION_MINOR}")
else()
  set(_cursus_abi "${cursus_VERSION_MAJOR}")
endif()

if(NOT TARGET cursus::cursus)
  add_library(cursus::cursus SHARED IMPORTED)
  set_target_properties(cursus::cursus PROPERTIES
    IMPORTED_LOCATION "${_cursus_prefix}/lib/libcursus.so.${_cursus_abi}"
    IMPORTED_SONAME "libcursus.so.${_cursus_abi}"
    INTERFACE_INCLUDE_DIRECTORIES "${_cursus_prefix}/include")
  include(CMakeFindDependencyMacro)
  find_dependency(Threads)
  set_property(TARGET cursus::cursus APPEND PROPERTY INTERFACE_LINK_LIBRARIES Threads::Threads ${CMAKE_DL_LIBS} m)
endif()

if(NOT TARGET cursus::cursus++)
  add_library(cursus::cursus++ INTERFACE IMPORTED)
  set_target_properties(cursus::cursus++ PROPERTIES INTERFACE_LINK_LIBRARIES cursus::cursus)
  target_compile_features(cursus::cursus++ INTERFACE cxx_std_17)
endif()

unset(_cursus_prefix)
unset(_cursus_abi)
