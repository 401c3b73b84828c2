# The Debian package (`make package`, or cpack in the build dir): plumb_<version>_<arch>.deb with
# what cmake/Install.cmake installs under /usr, and plumb-dbgsym_<version>_<arch>.ddeb with the
# binary's debug info. CPack splits it: objcopy --only-keep-debug into
# /usr/lib/debug/.build-id/<xx>/<rest>.debug, --strip-unneeded on the packaged binary, and a
# .gnu_debuglink to the .debug file (gdb finds it by build id once the .ddeb is installed).
# The build dir's own binary keeps its debug info. Depends: dpkg-shlibdeps on the binary, so it
# names the library packages (and versions) this build linked against.

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME plumb)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "plumb")
set(CPACK_PACKAGE_CONTACT "plumb maintainers <plumb@plumb.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "keeps a GPU cluster's software stack where a reviewed git commit says")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)   # plumb_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The extended description; CPack puts the summary above it.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "plumb reads a git-versioned YAML description of the nodes (kernel, NVIDIA
driver, CUDA, NCCL, OFED, firmware, BIOS and fabric settings), gathers live
state over SSH and Redfish BMCs, plans the difference and applies it
rolling-with-drain through Slurm, and reports drift.")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion")
# The debug info goes to the -dbgsym package; the binary must reach CPack unstripped for that
# (CPACK_STRIP_FILES would strip it first and leave nothing to split).
set(CPACK_DEBIAN_DEBUGINFO_PACKAGE ON)
set(CPACK_STRIP_FILES OFF)
# gzip, not xz: xz of the ~110 MB of debug info took over a minute of CPU (12 minutes of
# wall time on a loaded 2-core machine); all of cpack with gzip takes 23 s of CPU. The .ddeb is
# 36 MB instead of 24, the .deb 2.1 MB instead of 1.6.
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)

# `cpack --config CPackSourceConfig.cmake` (not used by the Makefile): no .git, no build trees.
set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/build[^/]*/" "\\\\.swp$" "/__pycache__/")

include(CPack)
