# The ONNX backend test suite on the reference provider. The test fails when a
# test outside tests/conformance/expected_failures_reference.txt fails, and
# when a listed test passes (so the list only shrinks).
if(EXISTS /usr/share/libonnx-testdata/data/node)
  add_test(NAME conformance_reference
           COMMAND kiln_cli conformance --provider reference
                   --expected-failures ${CMAKE_SOURCE_DIR}/tests/conformance/expected_failures_reference.txt)
  set_tests_properties(conformance_reference PROPERTIES TIMEOUT 900)
endif()
