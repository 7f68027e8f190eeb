// doctest's implementation and main, compiled once into the doctest_main library that every test
// program without a main of its own links (meson.build), instead of once per program.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
