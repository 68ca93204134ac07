# How the third-party libraries are linked: four targets the layers use instead of the packages'
# own, orrery_protobuf, orrery_yaml_cpp, orrery_cbc and orrery_sqlite3.
#
# Every shared library costs each start of `orrery` its loading and its symbol relocations (the
# dynamic loader was 57 % of `orrery --version`, README "Performance"). Debian also ships archives
# of protobuf, yaml-cpp, SQLite and CBC with its LP and BLAS stack (most of those relocations),
# so with ORRERY_STATIC_DEPS ON (the default) they are linked statically when every archive is
# found; otherwise, or with the option OFF, the shared libraries are used. Graphviz and fmt have no
# Debian archive and stay shared.

option(ORRERY_STATIC_DEPS "Link protobuf, yaml-cpp and CBC from Debian's static archives" ON)

# The archive libNAME.a, found the way the compiler finds its own libraries or in the system's.
function(orrery_find_archive out name)
  find_library(${out}_PATH NAMES lib${name}.a)
  if(NOT ${out}_PATH)
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=lib${name}.a
                    OUTPUT_VARIABLE compiler_path OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(IS_ABSOLUTE "${compiler_path}" AND EXISTS "${compiler_path}")
      set(${out}_PATH "${compiler_path}" CACHE FILEPATH "" FORCE)
    endif()
  endif()
  set(${out} "${${out}_PATH}" PARENT_SCOPE)
endfunction()

find_package(Threads REQUIRED)
set(Protobuf_USE_STATIC_LIBS ${ORRERY_STATIC_DEPS})
find_package(Protobuf REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(CBC REQUIRED IMPORTED_TARGET cbc)
pkg_check_modules(SQLITE3 REQUIRED IMPORTED_TARGET sqlite3)

add_library(orrery_protobuf INTERFACE)
target_link_libraries(orrery_protobuf INTERFACE protobuf::libprotobuf Threads::Threads)

add_library(orrery_yaml_cpp INTERFACE)
add_library(orrery_cbc INTERFACE)
add_library(orrery_sqlite3 INTERFACE)
set(static_yaml_cpp "")
set(static_sqlite3 "")
set(static_cbc "")
if(ORRERY_STATIC_DEPS)
  orrery_find_archive(static_yaml_cpp yaml-cpp)
  orrery_find_archive(static_sqlite3 sqlite3)
  # CBC's own static link line (pkg-config --static), then the Fortran runtime LAPACK needs.
  foreach(lib IN LISTS CBC_STATIC_LIBRARIES ITEMS gfortran quadmath)
    if(lib MATCHES "^(m|pthread|rt|dl)$")
      continue()
    endif()
    orrery_find_archive(archive_${lib} ${lib})
    if(NOT archive_${lib})
      message(STATUS "orrery: no static lib${lib}.a; CBC is linked shared")
      set(static_cbc "")
      break()
    endif()
    list(APPEND static_cbc ${archive_${lib}})
  endforeach()
endif()

if(static_yaml_cpp)
  target_link_libraries(orrery_yaml_cpp INTERFACE ${static_yaml_cpp})
  target_include_directories(orrery_yaml_cpp INTERFACE
                             $<TARGET_PROPERTY:yaml-cpp,INTERFACE_INCLUDE_DIRECTORIES>)
else()
  target_link_libraries(orrery_yaml_cpp INTERFACE yaml-cpp)
endif()

if(static_cbc)
  target_include_directories(orrery_cbc INTERFACE ${CBC_STATIC_INCLUDE_DIRS})
  target_compile_options(orrery_cbc INTERFACE ${CBC_STATIC_CFLAGS_OTHER})
  target_link_libraries(orrery_cbc INTERFACE ${static_cbc} m Threads::Threads)
else()
  target_link_libraries(orrery_cbc INTERFACE PkgConfig::CBC)
endif()

if(static_sqlite3)
  target_include_directories(orrery_sqlite3 INTERFACE ${SQLITE3_INCLUDE_DIRS})
  target_link_libraries(orrery_sqlite3 INTERFACE ${static_sqlite3} m ${CMAKE_DL_LIBS} Threads::Threads)
else()
  target_link_libraries(orrery_sqlite3 INTERFACE PkgConfig::SQLITE3)
endif()
