# Builds examples/external_plugin the way a plugin author would: against an sdk installed from
# this build into a scratch prefix, found with find_package(simfa). Then external_plugin_check
# loads the result through SIMFA_PLUGIN_PATH.
#
# cmake -DSIMFA_BINARY_DIR=... -DEXAMPLE_DIR=... -DGUIDE=<docs/plugin-authors.md> -DWORK_DIR=...
#       -DGENERATOR=... -DCXX_COMPILER=... -DCHECK=<external_plugin_check>
#       -P external_plugin_test.cmake
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(JOIN " " command ${ARGN})
    message(FATAL_ERROR "failed (${rc}): ${command}")
  endif()
endfunction()

# The guide shows the example's files whole; they must not drift apart.
file(READ ${GUIDE} guide)
foreach(example_file CMakeLists.txt random_tiebreak.cpp)
  file(READ ${EXAMPLE_DIR}/${example_file} text)
  string(FIND "${guide}" "${text}" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "${GUIDE} does not show ${EXAMPLE_DIR}/${example_file} as it is")
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK_DIR})
run(${CMAKE_COMMAND} --install ${SIMFA_BINARY_DIR} --prefix ${WORK_DIR}/prefix --component sdk)
run(${CMAKE_COMMAND} -S ${EXAMPLE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build --parallel 1)
set(ENV{SIMFA_PLUGIN_PATH} ${WORK_DIR}/build)
run(${CHECK})
