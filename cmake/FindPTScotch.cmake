# Finds PT-Scotch with a 64-bit SCOTCH_Num (Debian: libptscotch-dev, its scotch-int64 flavour:
# the default flavour's 32-bit SCOTCH_Num cannot hold ogbn-papers100M's 3.2e9 adjacency
# entries) and defines PTScotch::PTScotch.
#
# The static archives are linked: Debian's 32-bit and 64-bit shared flavours have the same
# SONAME (libscotch-7.0.so), so the loader would pick the default 32-bit one at run time.
set(_ptscotch_dir /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/scotch-int64)
find_path(PTSCOTCH_INCLUDE_DIR ptscotch.h HINTS /usr/include/scotch-int64 PATH_SUFFIXES scotch-int64)
foreach(_lib ptscotch scotch ptscotcherr)
  string(TOUPPER "${_lib}" _var)
  find_library(PTSCOTCH_${_var}_LIBRARY NAMES lib${_lib}.a HINTS ${_ptscotch_dir} PATH_SUFFIXES scotch-int64)
endforeach()
find_library(PTSCOTCH_BZ2_LIBRARY bz2)
find_library(PTSCOTCH_LZMA_LIBRARY lzma)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(PTScotch REQUIRED_VARS PTSCOTCH_PTSCOTCH_LIBRARY PTSCOTCH_SCOTCH_LIBRARY
                                  PTSCOTCH_PTSCOTCHERR_LIBRARY PTSCOTCH_INCLUDE_DIR PTSCOTCH_BZ2_LIBRARY
                                  PTSCOTCH_LZMA_LIBRARY)
if(PTScotch_FOUND AND NOT TARGET PTScotch::PTScotch)
  add_library(PTScotch::PTScotch INTERFACE IMPORTED)
  # Scotch's file compression support needs zlib, bzip2 and lzma.
  set_target_properties(PTScotch::PTScotch PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${PTSCOTCH_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES
      "${PTSCOTCH_PTSCOTCH_LIBRARY};${PTSCOTCH_SCOTCH_LIBRARY};${PTSCOTCH_PTSCOTCHERR_LIBRARY};ZLIB::ZLIB;${PTSCOTCH_BZ2_LIBRARY};${PTSCOTCH_LZMA_LIBRARY};MPI::MPI_C;Threads::Threads;m")
endif()
mark_as_advanced(PTSCOTCH_INCLUDE_DIR PTSCOTCH_PTSCOTCH_LIBRARY PTSCOTCH_SCOTCH_LIBRARY PTSCOTCH_PTSCOTCHERR_LIBRARY
                 PTSCOTCH_BZ2_LIBRARY PTSCOTCH_LZMA_LIBRARY)
