# scripts/seed-repro.sh: the seed report's table for model_nhwc and model_nchw,
# reference against cpu, each run in its own process and both in one process.
# Passes when the script exits 0 and prints an ok row for each model in both
# modes (and no MISMATCH).
add_test(NAME seed_repro
         COMMAND ${CMAKE_COMMAND} -E env KILN=$<TARGET_FILE:kiln_cli> bash ${CMAKE_SOURCE_DIR}/scripts/seed-repro.sh)
set_tests_properties(seed_repro PROPERTIES
  TIMEOUT 300
  PASS_REGULAR_EXPRESSION "model_nhwc[^\n]*\n[^\n]*\n  separate processes[^\n]* ok\n  one process \\(verify\\)[^\n]* ok\n  both modes agree\n\nmodel_nchw[^\n]*\n[^\n]*\n  separate processes[^\n]* ok\n  one process \\(verify\\)[^\n]* ok\n  both modes agree"
  FAIL_REGULAR_EXPRESSION "MISMATCH|DIFFER|seed-repro:")
