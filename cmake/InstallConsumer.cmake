# cmake -DCOFFER_BUILD_DIR=... -DCOFFER_EXAMPLE_DIR=... -DCOFFER_WORK_DIR=...
#       -DCOFFER_LIBDIR=... [-DCOFFER_CONFIG=...] [-DCOFFER_C_COMPILER=...]
#       [-DCOFFER_C_FLAGS=...] [-DCOFFER_EXE_LINKER_FLAGS=...]
#       [-DCOFFER_GENERATOR=...] -P InstallConsumer.cmake
# Installs the build into a scratch prefix, then builds and runs examples/c
# against that prefix through the CMake package and through pkg-config, and
# once with the README's cc line, finding the library through -Wl,-rpath.

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install_consumer: ${what} failed (${rc})")
  endif()
endfunction()

set(prefix ${COFFER_WORK_DIR}/prefix)
file(REMOVE_RECURSE ${COFFER_WORK_DIR})

set(config_args "")
if(COFFER_CONFIG)
  set(config_args --config ${COFFER_CONFIG})
endif()
run("install" ${CMAKE_COMMAND} --install ${COFFER_BUILD_DIR}
    --prefix ${prefix} ${config_args})

# Only the scratch prefix may provide Coffer.
set(ENV{PKG_CONFIG_PATH} ${prefix}/${COFFER_LIBDIR}/pkgconfig)
set(ENV{LD_LIBRARY_PATH} ${prefix}/${COFFER_LIBDIR})

set(common_args
  -DCMAKE_PREFIX_PATH=${prefix}
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  -DCMAKE_BUILD_TYPE=Debug)
if(COFFER_GENERATOR)
  list(APPEND common_args -G ${COFFER_GENERATOR})
endif()
if(COFFER_C_COMPILER)
  list(APPEND common_args -DCMAKE_C_COMPILER=${COFFER_C_COMPILER})
endif()
if(COFFER_C_FLAGS)
  list(APPEND common_args "-DCMAKE_C_FLAGS=${COFFER_C_FLAGS}")
endif()
string(STRIP "${COFFER_EXE_LINKER_FLAGS}" COFFER_EXE_LINKER_FLAGS)
if(COFFER_EXE_LINKER_FLAGS)
  list(APPEND common_args "-DCMAKE_EXE_LINKER_FLAGS=${COFFER_EXE_LINKER_FLAGS}")
endif()

foreach(mode IN ITEMS cmake pkg-config)
  set(bin ${COFFER_WORK_DIR}/${mode}-build)
  set(args ${common_args})
  if(mode STREQUAL "pkg-config")
    list(APPEND args -DCOFFER_EXAMPLE_USE_PKG_CONFIG=ON)
  endif()
  run("configure (${mode})" ${CMAKE_COMMAND} -S ${COFFER_EXAMPLE_DIR} -B ${bin} ${args})
  run("build (${mode})" ${CMAKE_COMMAND} --build ${bin} --config Debug)
  file(MAKE_DIRECTORY ${COFFER_WORK_DIR}/${mode}-run)
  execute_process(COMMAND ${bin}/coffer-demo WORKING_DIRECTORY ${COFFER_WORK_DIR}/${mode}-run
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install_consumer: coffer-demo (${mode}) failed (${rc})")
  endif()
endforeach()
message(STATUS "install_consumer: both consumers built and ran")

# The README's one-line build with pkg-config against a private prefix, which
# the program finds at run time through -Wl,-rpath, not LD_LIBRARY_PATH.
find_program(pkg_config NAMES pkg-config REQUIRED)
execute_process(COMMAND ${pkg_config} --cflags --libs coffer
                OUTPUT_VARIABLE pc_flags OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
execute_process(COMMAND ${pkg_config} --variable=libdir coffer
                OUTPUT_VARIABLE pc_libdir OUTPUT_STRIP_TRAILING_WHITESPACE)
# coffer.pc is relocatable: its libdir is relative to where the file lies.
get_filename_component(pc_libdir "${pc_libdir}" REALPATH)
get_filename_component(want_libdir "${prefix}/${COFFER_LIBDIR}" REALPATH)
if(NOT rc EQUAL 0 OR NOT pc_libdir STREQUAL want_libdir)
  message(FATAL_ERROR "install_consumer: pkg-config does not find the scratch prefix (${pc_libdir})")
endif()
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
separate_arguments(extra_flags UNIX_COMMAND "${COFFER_C_FLAGS} ${COFFER_EXE_LINKER_FLAGS}")
if(NOT COFFER_C_COMPILER)
  set(COFFER_C_COMPILER cc)
endif()
set(rpath_demo ${COFFER_WORK_DIR}/rpath-demo)
run("cc with pkg-config and -Wl,-rpath" ${COFFER_C_COMPILER} -std=c11 ${extra_flags}
    ${COFFER_EXAMPLE_DIR}/demo.c ${pc_flags} -Wl,-rpath,${pc_libdir} -o ${rpath_demo})
unset(ENV{LD_LIBRARY_PATH})
file(MAKE_DIRECTORY ${COFFER_WORK_DIR}/rpath-run)
execute_process(COMMAND ${rpath_demo} WORKING_DIRECTORY ${COFFER_WORK_DIR}/rpath-run
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install_consumer: the -Wl,-rpath build did not run (${rc})")
endif()
message(STATUS "install_consumer: the pkg-config build found libcoffer through its rpath")
