#===- TfmInstall.cmake - cmake --install and the tfm CMake package -----===#
#
# Installs the tools, the runtime library and its headers, and the package
# files that let another project find_package(tfm) and call tfm_add_model()
# (docs/embedding.md). The compiler's own libraries are not installed: apps
# use tfm-compile, never link it.
#
#===----------------------------------------------------------------------===#
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TFM_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/tfm")

install(TARGETS tfm_runtime EXPORT tfmTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/runtime/include/tfm"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")

set(tools tfm-run)
if(TFM_BUILD_COMPILER)
  list(APPEND tools tfm-compile)
endif()
install(TARGETS ${tools} EXPORT tfmTargets
        RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")

install(EXPORT tfmTargets NAMESPACE tfm::
        DESTINATION "${TFM_INSTALL_CMAKEDIR}")
configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/tfmConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/tfmConfig.cmake"
  INSTALL_DESTINATION "${TFM_INSTALL_CMAKEDIR}")
# 0.x releases may break compatibility between minor versions.
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/tfmConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/tfmConfig.cmake"
              "${PROJECT_BINARY_DIR}/tfmConfigVersion.cmake"
              "${PROJECT_SOURCE_DIR}/cmake/TfmAddModel.cmake"
        DESTINATION "${TFM_INSTALL_CMAKEDIR}")
