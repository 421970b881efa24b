# Empties (or creates) the directory DIR: the fresh working directory of a
# C test, run by CTest as a fixture before the test itself.
if(NOT DIR)
  message(FATAL_ERROR "fresh_dir.cmake: DIR is not set")
endif()
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
