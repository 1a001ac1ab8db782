# A fixed seeded batch of `kiln fuzz` graphs (src/verify/fuzz.h): the cpu
# provider against the reference provider at every opt level, at 1 and at 2
# threads. A graph is identified by its seed, so a failure here is replayed
# with `kiln fuzz --seed S --count 1 --opt-level all-levels --out DIR` (plus the
# test's --max-channels and environment, where it sets them).
# Known bugs found by the fuzzer and not fixed yet are excluded with --skip,
# each with a comment naming the bug (and its reproducer under
# tests/regressions/).
# Sizing (Release, 2 shared cores): 400 graphs x 4 levels at 1 thread ~15 s,
# 200 graphs (up to 16 productions) x 4 levels at 2 threads ~35 s.
#  (none open: 1000038, the cpu Resize that ignored opset 11's
#  tf_half_pixel_for_nn on the unresized N and C axes, is fixed; its reproducer
#  stays in tests/regressions/resize11_tf_half_pixel_for_nn_shift.)
set(KILN_FUZZ_SKIP)
add_test(NAME fuzz_cpu_all_levels_t1
         COMMAND kiln_cli fuzz --seed 1 --count 400 --provider cpu --opt-level all-levels --threads 1
                 --out ${CMAKE_BINARY_DIR}/fuzz_failures ${KILN_FUZZ_SKIP})
add_test(NAME fuzz_cpu_all_levels_t2
         COMMAND kiln_cli fuzz --seed 1000001 --count 200 --provider cpu --opt-level all-levels --threads 2 --max-ops 16
                 --out ${CMAKE_BINARY_DIR}/fuzz_failures ${KILN_FUZZ_SKIP})
# Further graphs through kiln's own convolution kernels wherever they can
# run them (the fuzzer's maps, at most 24 px and 32 channels, are below most
# of the thresholds where they are preferred: 2x2 Winograd tiles from 64
# channels, the 1x1 kernel above 128): 4x4 Winograd tiles, the 1x1 and the
# direct kernel; then 2x2 tiles. 2 x 200 graphs at every level, ~9 s.
add_test(NAME fuzz_cpu_own_kernels
         COMMAND kiln_cli fuzz --seed 3000001 --count 200 --provider cpu --opt-level all-levels --threads 2
                 --out ${CMAKE_BINARY_DIR}/fuzz_failures ${KILN_FUZZ_SKIP})
set_tests_properties(fuzz_cpu_own_kernels PROPERTIES ENVIRONMENT "KILN_CPU_WINOGRAD=kiln;KILN_CPU_POINTWISE=all;KILN_CPU_DIRECT=all")
add_test(NAME fuzz_cpu_own_kernels_winograd2
         COMMAND kiln_cli fuzz --seed 3100001 --count 200 --provider cpu --opt-level all-levels --threads 1
                 --out ${CMAKE_BINARY_DIR}/fuzz_failures ${KILN_FUZZ_SKIP})
set_tests_properties(fuzz_cpu_own_kernels_winograd2 PROPERTIES ENVIRONMENT "KILN_CPU_WINOGRAD=kiln2;KILN_CPU_DIRECT=all")
# Wider convolutions (up to 160 output channels, on maps of up to 12x12 at
# that width): weight panels of 64 channels and more, channel shares split
# inside a panel, the 1x1 kernel (more than 128 input channels) and 2x2
# Winograd tiles (64 and more) at their default thresholds, then everything
# through kiln's own kernels again. 2 x 200 graphs at every level, ~12 s.
add_test(NAME fuzz_cpu_wide_channels
         COMMAND kiln_cli fuzz --seed 5000001 --count 200 --max-channels 160 --provider cpu --opt-level all-levels --threads 2
                 --out ${CMAKE_BINARY_DIR}/fuzz_failures ${KILN_FUZZ_SKIP})
add_test(NAME fuzz_cpu_wide_channels_own_kernels
         COMMAND kiln_cli fuzz --seed 5100001 --count 200 --max-channels 160 --provider cpu --opt-level all-levels --threads 1
                 --out ${CMAKE_BINARY_DIR}/fuzz_failures ${KILN_FUZZ_SKIP})
set_tests_properties(fuzz_cpu_wide_channels_own_kernels PROPERTIES ENVIRONMENT "KILN_CPU_WINOGRAD=kiln;KILN_CPU_POINTWISE=all;KILN_CPU_DIRECT=all")
# float16 variants of the graphs (src/verify/fuzz_float16.h), 300 x 4 levels ~6 s.
add_test(NAME fuzz_cpu_float16_all_levels
         COMMAND kiln_cli fuzz --seed 2000001 --count 300 --float16 1 --provider cpu --opt-level all-levels --threads 1
                 --out ${CMAKE_BINARY_DIR}/fuzz_failures ${KILN_FUZZ_SKIP})
set_tests_properties(fuzz_cpu_all_levels_t1 fuzz_cpu_all_levels_t2 fuzz_cpu_float16_all_levels fuzz_cpu_own_kernels
                     fuzz_cpu_own_kernels_winograd2 fuzz_cpu_wide_channels fuzz_cpu_wide_channels_own_kernels PROPERTIES TIMEOUT 600)

# Reproducers of bugs the fuzzer found (tests/regressions/<name>/, ONNX
# backend-test folders), replayed on the cpu and reference providers. Bugs not fixed yet are
# listed here and expected to fail (WILL_FAIL), so make test stays green and
# the fix shows as this test failing: then remove the name from the list.
set(KILN_FUZZ_OPEN_REGRESSIONS)
file(GLOB KILN_FUZZ_REGRESSIONS LIST_DIRECTORIES true ${CMAKE_SOURCE_DIR}/tests/regressions/*)
foreach(dir ${KILN_FUZZ_REGRESSIONS})
  if(EXISTS ${dir}/model.onnx)
    get_filename_component(name ${dir} NAME)
    add_test(NAME regression_${name} COMMAND kiln_cli conformance ${dir} --provider cpu)
    # The reference too: several of these were reference bugs (the expected
    # outputs were settled by the spec and ONNX Runtime).
    add_test(NAME regression_${name}_reference COMMAND kiln_cli conformance ${dir} --provider reference)
    if(name IN_LIST KILN_FUZZ_OPEN_REGRESSIONS)
      set_tests_properties(regression_${name} PROPERTIES WILL_FAIL TRUE)
    endif()
  endif()
endforeach()
