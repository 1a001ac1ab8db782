# The ONNX backend test suite on the reference provider, and on the cpu
# provider (passes, layouts and kernels; declined nodes fall back to the
# reference) with the same expectations. Each test fails when a test outside
# tests/conformance/expected_failures_reference.txt fails, and when a listed
# test passes (so the list only shrinks).
if(EXISTS /usr/share/libonnx-testdata/data/node)
  foreach(provider reference cpu)
    add_test(NAME conformance_${provider}
             COMMAND kiln_cli conformance --provider ${provider}
                     --expected-failures ${CMAKE_SOURCE_DIR}/tests/conformance/expected_failures_reference.txt)
    set_tests_properties(conformance_${provider} PROPERTIES TIMEOUT 900)
  endforeach()
endif()
