# Installs the libraries, the header, the CMake package and coffer.pc.

set(COFFER_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Coffer)

install(TARGETS coffer coffer_static
  EXPORT CofferTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/coffer.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(EXPORT CofferTargets
  NAMESPACE Coffer::
  DESTINATION ${COFFER_CMAKE_DIR})
configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/CofferConfig.cmake.in
  ${PROJECT_BINARY_DIR}/CofferConfig.cmake
  INSTALL_DESTINATION ${COFFER_CMAKE_DIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/CofferConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/CofferConfig.cmake
  ${PROJECT_BINARY_DIR}/CofferConfigVersion.cmake
  DESTINATION ${COFFER_CMAKE_DIR})

# coffer.pc locates the prefix from its own folder (${pcfiledir}), so that
# `cmake --install --prefix` and DESTDIR installs stay correct.
function(coffer_pc_path var dir)
  if(IS_ABSOLUTE "${dir}")
    set(${var} "${dir}" PARENT_SCOPE)
  else()
    set(${var} "\${prefix}/${dir}" PARENT_SCOPE)
  endif()
endfunction()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(COFFER_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _coffer_up "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
  string(REGEX REPLACE "/$" "" _coffer_up "${_coffer_up}")
  set(COFFER_PC_PREFIX "\${pcfiledir}/${_coffer_up}")
endif()
coffer_pc_path(COFFER_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
coffer_pc_path(COFFER_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/coffer.pc.in
  ${PROJECT_BINARY_DIR}/coffer.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/coffer.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
