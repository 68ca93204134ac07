# orrery_embed_files(OUTPUT <file.cpp> NAMESPACE <ns> FUNCTION <name> FILES <f>...)
#
# Generates a C++ source defining
#   std::span<const orrery::EmbeddedFile> <ns>::<name>();
# that returns {name, contents} for every listed file (name = file name without directory),
# so data shipped with Orrery (cluster presets, ...) lives inside the binary and needs no install
# path. The source is regenerated whenever one of the files changes.
function(orrery_embed_files)
  cmake_parse_arguments(ARG "" "OUTPUT;NAMESPACE;FUNCTION" "FILES" ${ARGN})
  add_custom_command(
    OUTPUT ${ARG_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${ARG_OUTPUT} -DNAMESPACE=${ARG_NAMESPACE}
            -DFUNCTION=${ARG_FUNCTION} "-DFILES=${ARG_FILES}"
            -P ${PROJECT_SOURCE_DIR}/cmake/EmbedFilesScript.cmake
    DEPENDS ${ARG_FILES} ${PROJECT_SOURCE_DIR}/cmake/EmbedFilesScript.cmake
    COMMENT "Embedding ${ARG_FUNCTION} data files"
    VERBATIM)
endfunction()
