# SPDX-License-Identifier: Apache-2.0
# The CUDA backend of the harness.
#
# The eval side (KF_HARNESS_CUDA_SOURCES) is plain C that drives nvcc and
# the runner; it includes no CUDA header and is always built into
# kf-harness, so the compile and link stages of CUDA candidates work (and
# are tested) wherever nvcc exists at run time, GPU or not.
#
# kf-harness-cuda -- the CUDA runner and `info` (device + ceilings) -- is the
# one program linked with the CUDA runtime (shared: a candidate built with
# -cudart shared binds to the same libcudart instance).  It is built when
# CMake finds the CUDA toolkit: -DKF_CUDA=ON/OFF overrides.  A machine
# without the toolkit builds and tests everything else.
find_package(CUDAToolkit QUIET)
option(KF_CUDA "Build kf-harness-cuda (needs the CUDA toolkit)" ${CUDAToolkit_FOUND})
if(KF_CUDA AND NOT CUDAToolkit_FOUND)
  message(FATAL_ERROR "KF_CUDA=ON but the CUDA toolkit was not found "
                      "(set CUDAToolkit_ROOT or put nvcc on PATH)")
endif()

set(KF_HARNESS_CUDA_SOURCES
  ${CMAKE_SOURCE_DIR}/harness/cuda/backend.c
  ${CMAKE_SOURCE_DIR}/harness/cuda/compile.c
  ${CMAKE_SOURCE_DIR}/harness/cuda/usage.c
  ${CMAKE_SOURCE_DIR}/harness/cuda/elfcheck.c
  ${CMAKE_SOURCE_DIR}/harness/cuda/info_cmd.c)

# The runner's own device code (input draws, canaries, digests) is built
# for every GPU generation a worker may have, plus PTX for later ones.
if(KF_CUDA)
  if(NOT CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80-real 90-real 100-real 120-real 120-virtual)
  endif()
  if(NOT CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
  endif()
  enable_language(CUDA)
endif()

# Called after kf-harness exists.
macro(kf_harness_cuda_targets)
  if(CUDAToolkit_NVCC_EXECUTABLE)
    target_compile_definitions(kf-harness PRIVATE
      KF_NVCC_DEFAULT="${CUDAToolkit_NVCC_EXECUTABLE}")
  endif()
  if(KF_CUDA)
    message(STATUS "KernelFleet: CUDA backend on (CUDA ${CUDAToolkit_VERSION}, "
                   "${CUDAToolkit_NVCC_EXECUTABLE})")
    add_executable(kf-harness-cuda harness/cuda/main.c harness/cuda/runner.c
      harness/core/sandbox.c harness/cuda/filter.c harness/cuda/cupti.c
      harness/cuda/info.c harness/cuda/footprint.c harness/cuda/netns.c harness/cuda/kernels.cu)
    target_include_directories(kf-harness-cuda PRIVATE ${KF_HARNESS_INCLUDES})
    # one runtime instance with the candidates (built -cudart shared)
    set_target_properties(kf-harness-cuda PROPERTIES
      CUDA_RUNTIME_LIBRARY Shared)
    # Like kf-harness-runner: no sanitizers under seccomp and rlimits, and
    # the code timed is the candidate's, not ASan's.
    target_compile_options(kf-harness-cuda PRIVATE
      $<$<COMPILE_LANGUAGE:C>:-fno-sanitize=all>)
    target_link_options(kf-harness-cuda PRIVATE -fno-sanitize=all)
    target_link_libraries(kf-harness-cuda PRIVATE CUDA::cudart CUDA::cupti
      CUDA::cuda_driver ${CMAKE_DL_LIBS})
    add_dependencies(kf-harness kf-harness-cuda)
  else()
    message(STATUS "KernelFleet: CUDA backend off (no kf-harness-cuda; CUDA "
                   "candidates stop at the load stage)")
  endif()
endmacro()
