//===- CatchMain.cpp - The one Catch2 main of all unit suites -------------===//
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
