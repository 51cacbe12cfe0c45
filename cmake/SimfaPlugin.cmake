# simfa_add_plugin(NAME ENTRY entry.cpp SOURCES a.cpp b.cpp ...)
#
# Builds the component sources once into NAME_impl (a static library unit tests link against
# directly) and the shared-library plugin NAME from ENTRY (the file with SIMFA_PLUGIN(...)).
# Plugins see the sdk alone, are built with hidden visibility (only the descriptor alias is
# exported) and land in the build tree where the `simfa` binary looks for them.
function(simfa_add_plugin name)
  cmake_parse_arguments(P "" "ENTRY" "SOURCES" ${ARGN})
  add_library(${name}_impl STATIC ${P_SOURCES})
  target_link_libraries(${name}_impl PUBLIC simfa::sdk PRIVATE simfa_warnings)
  target_include_directories(${name}_impl PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
  set_target_properties(${name}_impl PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)

  add_library(${name} MODULE ${P_ENTRY})
  target_link_libraries(${name} PRIVATE ${name}_impl simfa_warnings)
  # Under clang's sanitizers the runtime lives in the executable, so a plugin's references to it
  # resolve only when it is loaded: the fuzz build links plugins without --no-undefined.
  target_link_options(${name} PRIVATE $<$<NOT:$<BOOL:${SIMFA_FUZZ}>>:-Wl,--no-undefined> -Wl,-z,now)
  set_target_properties(${name} PROPERTIES
    PREFIX "lib"
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    LIBRARY_OUTPUT_DIRECTORY ${SIMFA_PLUGIN_BUILD_DIR})
  install(TARGETS ${name} LIBRARY DESTINATION ${SIMFA_PLUGIN_SUBDIR})
  set_property(GLOBAL APPEND PROPERTY SIMFA_PLUGIN_TARGETS ${name})
endfunction()
