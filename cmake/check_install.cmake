# CTest install.into_a_prefix: `cmake --install` of the build into a fresh prefix holds the
# command, its presets, its help text and its docs, and the installed command runs.
# Usage: cmake -DBUILD=build-dir -DPREFIX=scratch-dir -P cmake/check_install.cmake
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${PREFIX}
                RESULT_VARIABLE status OUTPUT_QUIET)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${status})")
endif()
foreach(path bin/orrery share/orrery/presets/clusters/hgx-h100.yaml
        share/doc/orrery/README.md share/doc/orrery/orrery-help.txt
        share/doc/orrery/docs/network.md)
  if(NOT EXISTS ${PREFIX}/${path})
    message(FATAL_ERROR "not installed: ${path}")
  endif()
endforeach()
file(READ ${PREFIX}/share/doc/orrery/orrery-help.txt help)
if(NOT help MATCHES "==> orrery simulate --help")
  message(FATAL_ERROR "the help text lacks simulate's --help")
endif()
execute_process(COMMAND ${PREFIX}/bin/orrery --version OUTPUT_VARIABLE version RESULT_VARIABLE status)
if(NOT status EQUAL 0 OR NOT version MATCHES "^orrery ")
  message(FATAL_ERROR "the installed orrery does not run: '${version}' (${status})")
endif()
file(REMOVE_RECURSE ${PREFIX})
