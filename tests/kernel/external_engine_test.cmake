# Builds examples/external_engine the way a plugin author would (against an sdk installed from
# this build into a scratch prefix, found with find_package(simfa)), then runs its manifest and
# trace through simfa with SIMFA_PLUGIN_PATH: the UMMA instructions parse, reach the umma.demo
# engine in [sm.umma] and run, the same in event and reference stepping, and the Gantt chart
# draws their spans as the table declares them, the flights the engine reports included.
#
# cmake -DSIMFA_BINARY_DIR=... -DEXAMPLE_DIR=... -DWORK_DIR=... -DGENERATOR=... -DCXX_COMPILER=...
#       -DSIMFA=<simfa> -P external_engine_test.cmake
include(${CMAKE_CURRENT_LIST_DIR}/out_of_tree_build.cmake)

build_out_of_tree()

foreach(stepping event reference)
  run(${SIMFA} run ${EXAMPLE_DIR}/blackwell_demo.toml --workload ${EXAMPLE_DIR}/umma.trace -q
      --stepping ${stepping} --stats ${WORK_DIR}/${stepping}.json)
  file(READ ${WORK_DIR}/${stepping}.json stats)
  string(JSON outcome GET "${stats}" kernel outcome)
  string(JSON cycles_${stepping} GET "${stats}" kernel cycles)
  string(JSON ummas GET "${stats}" "sm[0]" umma ummas)
  string(JSON issued GET "${stats}" "sm[0]" issued umma)
  string(JSON plugin GET "${stats}" manifest sm umma plugin)
  # Two CTAs, one a SM (round robin), each four UMMAs.
  if(NOT outcome STREQUAL "completed" OR NOT ummas EQUAL 4 OR NOT issued EQUAL 4
     OR NOT plugin STREQUAL "umma.demo")
    message(FATAL_ERROR "${stepping}: outcome ${outcome}, sm[0].umma.ummas ${ummas}, "
                        "sm[0].issued.umma ${issued}, [sm.umma] ${plugin}")
  endif()
endforeach()
# The summary shows the plugin engine's busy share, which it reports through
# InstructionEngine::busy_cycles and the SM's meters (the kernel knows no name of its statistics).
execute_process(COMMAND ${SIMFA} run ${EXAMPLE_DIR}/blackwell_demo.toml
                        --workload ${EXAMPLE_DIR}/umma.trace
                OUTPUT_VARIABLE summary RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT summary MATCHES "\numma busy +[0-9.]+%\n")
  message(FATAL_ERROR "the summary shows no 'umma busy' line (exit ${rc}):\n${summary}")
endif()
# The Gantt chart takes the plugin's spans from the instruction table: UMMA's issue and waits get
# legend entries and colours of their own, none is drawn as gray "other".
run(${SIMFA} run ${EXAMPLE_DIR}/blackwell_demo.toml --workload ${EXAMPLE_DIR}/umma.trace -q
    --gantt ${WORK_DIR}/umma.svg)
file(READ ${WORK_DIR}/umma.svg svg)
# The engine reports each UMMA's flight (EngineClient::on_engine_flight): the SM draws the span
# the table declares for it, UMMA in flight, in a row of its own that the note under the legend
# names after Hopper's.
foreach(want ">UMMA issue</text>" "data-kind=\"umma\"" ">UMMA in flight</text>"
        "data-kind=\"umma_flight\"" "its WGMMAs in flight, its UMMAs in flight.")
  string(FIND "${svg}" "${want}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the Gantt chart of umma.trace lacks '${want}'")
  endif()
endforeach()
string(FIND "${svg}" "other spans" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "the Gantt chart of umma.trace draws spans as gray 'other'")
endif()
if(NOT cycles_event EQUAL cycles_reference)
  message(FATAL_ERROR "event stepping ran ${cycles_event} cycles, reference ${cycles_reference}")
endif()
message(STATUS "umma.demo ran: ${cycles_event} cycles in both steppings")
