# Builds examples/external_plugin the way a plugin author would: against an sdk installed from
# this build into a scratch prefix, found with find_package(simfa). Then external_plugin_check
# loads the result through SIMFA_PLUGIN_PATH.
#
# cmake -DSIMFA_BINARY_DIR=... -DEXAMPLE_DIR=... -DGUIDE=<docs/plugin-authors.md> -DWORK_DIR=...
#       -DGENERATOR=... -DCXX_COMPILER=... -DCHECK=<external_plugin_check>
#       -P external_plugin_test.cmake
include(${CMAKE_CURRENT_LIST_DIR}/out_of_tree_build.cmake)

# The guide shows the example's files whole; they must not drift apart.
file(READ ${GUIDE} guide)
foreach(example_file CMakeLists.txt random_tiebreak.cpp)
  file(READ ${EXAMPLE_DIR}/${example_file} text)
  string(FIND "${guide}" "${text}" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "${GUIDE} does not show ${EXAMPLE_DIR}/${example_file} as it is")
  endif()
endforeach()

build_out_of_tree()
run(${CHECK})
