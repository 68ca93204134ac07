# Writes the --help text of `orrery` and of each of its subcommands into one file, installed as
# the command's reference beside the README (cmake/Packaging.cmake).
# Usage: cmake -DORRERY=path/to/orrery -DOUT=orrery-help.txt -P cmake/HelpText.cmake
set(text "")
foreach(command "" simulate collective convert presets calibrate explore results)
  execute_process(COMMAND ${ORRERY} ${command} --help OUTPUT_VARIABLE help RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "orrery ${command} --help failed (${status})")
  endif()
  string(APPEND text "==> orrery ${command} --help\n${help}\n")
endforeach()
file(WRITE ${OUT} "${text}")
