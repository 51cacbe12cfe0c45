# What the out-of-tree tests share (included by external_plugin_test.cmake and
# external_engine_test.cmake): run(), which fails the test naming the command, and
# build_out_of_tree(), which installs this build's sdk into ${WORK_DIR}/prefix, builds
# ${EXAMPLE_DIR} against it as a plugin author would (find_package(simfa)) in ${WORK_DIR}/build
# and points SIMFA_PLUGIN_PATH at the result.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(JOIN " " command ${ARGN})
    message(FATAL_ERROR "failed (${rc}): ${command}")
  endif()
endfunction()

function(build_out_of_tree)
  file(REMOVE_RECURSE ${WORK_DIR})
  run(${CMAKE_COMMAND} --install ${SIMFA_BINARY_DIR} --prefix ${WORK_DIR}/prefix --component sdk)
  run(${CMAKE_COMMAND} -S ${EXAMPLE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
      -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/build --parallel 1)
  set(ENV{SIMFA_PLUGIN_PATH} ${WORK_DIR}/build)
endfunction()
