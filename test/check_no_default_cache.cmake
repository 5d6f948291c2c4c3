# Fails if a test fell back to the default cache directory (see test/CMakeLists.txt).
if(EXISTS "${DIR}")
  file(GLOB_RECURSE used RELATIVE "${DIR}" "${DIR}/*")
  message(FATAL_ERROR "a test used the default cache directory ${DIR} instead of its own: ${used}")
endif()
message(STATUS "no test used the default cache directory")
