# What `make install` puts where (GNU directories under CMAKE_INSTALL_PREFIX, /usr/local by
# default) and the Debian package `make package` builds from the same rules with CPack:
#   bin/orrery (and bin/orrery-mpi when built)        the commands; presets are built in
#   share/orrery/presets, share/orrery/examples        the presets as files, the bundled inputs
#   share/doc/orrery/README.md, docs/, orrery-help.txt the documentation and every --help text
include(GNUInstallDirs)

install(TARGETS orrery RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET orrery-mpi)
  install(TARGETS orrery-mpi RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/data/presets/ DESTINATION ${CMAKE_INSTALL_DATADIR}/orrery/presets)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${CMAKE_INSTALL_DATADIR}/orrery/examples)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

set(ORRERY_HELP_TEXT ${CMAKE_BINARY_DIR}/orrery-help.txt)
add_custom_command(
  OUTPUT ${ORRERY_HELP_TEXT}
  COMMAND ${CMAKE_COMMAND} -DORRERY=$<TARGET_FILE:orrery> -DOUT=${ORRERY_HELP_TEXT} -P
          ${PROJECT_SOURCE_DIR}/cmake/HelpText.cmake
  DEPENDS orrery ${PROJECT_SOURCE_DIR}/cmake/HelpText.cmake
  COMMENT "Writing every --help text")
add_custom_target(orrery_help_text ALL DEPENDS ${ORRERY_HELP_TEXT})
install(FILES ${ORRERY_HELP_TEXT} DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME orrery)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Simulator of distributed AI training iterations")
set(CPACK_PACKAGE_CONTACT "Orrery developers <orrery@localhost>")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# The shared libraries the binaries load (Graphviz, fmt, libstdc++; OpenMPI for orrery-mpi)
# become the package's dependencies, as dpkg-shlibdeps finds them.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
include(CPack)
