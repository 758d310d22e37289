# Locates Eigen3 (target Eigen3::Eigen) without a system package.
#
# The PyPI package cmeel-eigen installs Eigen3Config.cmake under site-packages/cmeel.prefix/, a folder
# CMake does not search by itself. Ask the Python interpreter that drives the build (pip's isolated build
# environment sees the build requirement) for the cmeel.prefix folders on sys.path and prepend them to
# CMAKE_PREFIX_PATH, then find_package as usual. A system Eigen (e.g. Debian's libeigen3-dev) also works.
if(NOT TARGET Eigen3::Eigen)
  if(NOT Python_EXECUTABLE)
    find_package(Python COMPONENTS Interpreter QUIET)
  endif()
  if(Python_EXECUTABLE)
    execute_process(
      COMMAND "${Python_EXECUTABLE}" -c
              "import os, sys; print(';'.join(os.path.join(p, 'cmeel.prefix') for p in sys.path if os.path.isdir(os.path.join(p, 'cmeel.prefix'))))"
      OUTPUT_VARIABLE _rb_cmeel_prefixes
      OUTPUT_STRIP_TRAILING_WHITESPACE
      ERROR_QUIET)
    if(_rb_cmeel_prefixes)
      list(PREPEND CMAKE_PREFIX_PATH ${_rb_cmeel_prefixes})
    endif()
  endif()
  find_package(Eigen3 3.3 CONFIG QUIET)
  if(NOT Eigen3_FOUND)
    message(FATAL_ERROR "Eigen 3.3 or later was not found. Install it with `apt-get install libeigen3-dev` "
                        "(Debian/Ubuntu) or `pip install cmeel-eigen` (any platform, into the Python that "
                        "CMake finds), or pass -DEigen3_DIR=<folder holding Eigen3Config.cmake>.")
  endif()
endif()
