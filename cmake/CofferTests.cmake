# Tests of the build itself; the C unit tests live in Tests/c.

if(EXISTS ${PROJECT_SOURCE_DIR}/Tests/c/CMakeLists.txt)
  add_subdirectory(Tests/c)
endif()

# Only coffer_* symbols leave the shared library, it has the right SONAME and
# it exports every function coffer.h declares.
add_test(NAME exported_symbols
  COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check-exports.sh
          $<TARGET_FILE:coffer>
          libcoffer.so.${PROJECT_VERSION_MAJOR}
          ${PROJECT_SOURCE_DIR}/include/coffer.h)

# Installs into a scratch prefix and builds examples/c against it, once with
# find_package(Coffer) and once with pkg-config, as a user would.
set(_coffer_consumer_flags "")
set(_coffer_consumer_link_flags "${CMAKE_EXE_LINKER_FLAGS}")
if(COFFER_SANITIZE OR COFFER_TSAN)
  # A sanitized libcoffer needs sanitized programs to load it.
  string(REPLACE ";" " " _coffer_consumer_flags "${COFFER_SANITIZE_FLAGS}")
  string(APPEND _coffer_consumer_link_flags " ${_coffer_consumer_flags}")
endif()
add_test(NAME install_consumer
  COMMAND ${CMAKE_COMMAND}
          "-DCOFFER_BUILD_DIR=${PROJECT_BINARY_DIR}"
          "-DCOFFER_EXAMPLE_DIR=${PROJECT_SOURCE_DIR}/examples/c"
          "-DCOFFER_WORK_DIR=${PROJECT_BINARY_DIR}/install-consumer"
          "-DCOFFER_LIBDIR=${CMAKE_INSTALL_LIBDIR}"
          "-DCOFFER_CONFIG=$<CONFIG>"
          "-DCOFFER_C_COMPILER=${CMAKE_C_COMPILER}"
          "-DCOFFER_C_FLAGS=${_coffer_consumer_flags}"
          "-DCOFFER_EXE_LINKER_FLAGS=${_coffer_consumer_link_flags}"
          "-DCOFFER_GENERATOR=${CMAKE_GENERATOR}"
          -P ${CMAKE_CURRENT_LIST_DIR}/InstallConsumer.cmake)

if(TARGET coffer-demo)
  # Twice in one fresh folder: the second run reopens the first run's file.
  add_test(NAME demo
    COMMAND ${CMAKE_COMMAND}
            "-DCOFFER_DEMO=$<TARGET_FILE:coffer-demo>"
            "-DCOFFER_WORK_DIR=${PROJECT_BINARY_DIR}/demo-run"
            -P ${CMAKE_CURRENT_LIST_DIR}/RunDemo.cmake)
endif()

# The corruption campaign (scripts/corruption-campaign): 100 rounds of random
# damage to files of every object kind, each used and verified in a child
# process; fails if coffer_verify() crashes. A fixed seed keeps the run the
# same from one build to the next; scripts/corruption-campaign-long explores.
# It loads libcoffer into Python, which a sanitized library cannot be.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND AND NOT COFFER_SANITIZE AND NOT COFFER_TSAN)
  add_test(NAME corruption_campaign
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/corruption-campaign
            --rounds 100 --seed 24 --library $<TARGET_FILE:coffer>)
  set_tests_properties(corruption_campaign PROPERTIES TIMEOUT 300 LABELS "campaign")
endif()
