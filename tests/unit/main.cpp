// The doctest main for mk_unit_tests; the test cases live in the other tests/unit/*.cpp files.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
