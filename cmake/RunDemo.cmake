# cmake -DCOFFER_DEMO=<program> -DCOFFER_WORK_DIR=<dir> -P RunDemo.cmake
# Runs the demo twice in a fresh folder; it must exit 0 and leave its
# default database, default.coffer, there.

file(REMOVE_RECURSE ${COFFER_WORK_DIR})
file(MAKE_DIRECTORY ${COFFER_WORK_DIR})

foreach(run IN ITEMS first second)
  message(STATUS "demo: ${run} run in ${COFFER_WORK_DIR}")
  execute_process(COMMAND ${COFFER_DEMO}
    WORKING_DIRECTORY ${COFFER_WORK_DIR}
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "demo: ${run} run failed (${rc})")
  endif()
endforeach()

if(NOT EXISTS ${COFFER_WORK_DIR}/default.coffer)
  message(FATAL_ERROR "demo: no default.coffer in ${COFFER_WORK_DIR}")
endif()
