# cmake -DPROGRAM=PATH -DFILTERS=P1:P2:... -P check_test_filters.cmake
# Fails when a test program has a test that none of its perfgate_tests
# filters selects (tests/CMakeLists.txt): ctest would never run it.
if(NOT PROGRAM OR NOT FILTERS)
  message(FATAL_ERROR "usage: cmake -DPROGRAM=PATH -DFILTERS=P1:P2:... -P check_test_filters.cmake")
endif()
execute_process(COMMAND ${PROGRAM} --gtest_list_tests "--gtest_filter=*-${FILTERS}"
                OUTPUT_VARIABLE listed ERROR_VARIABLE errors RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} --gtest_list_tests failed (${status}):\n${errors}")
endif()
# GoogleTest's main says where it runs from before the list.
string(REGEX REPLACE "Running main\\(\\)[^\n]*\n?" "" listed "${listed}")
string(STRIP "${listed}" listed)
if(listed)
  message(FATAL_ERROR "tests of ${PROGRAM} that no perfgate_tests FILTER in tests/CMakeLists.txt selects, "
                      "so ctest never runs them; give their suite a perfgate_tests call:\n${listed}")
endif()
