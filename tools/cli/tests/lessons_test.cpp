#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "lessons.h"

using namespace mgpu::cli;
namespace fs = std::filesystem;

TEST_CASE("lesson numbers are one or two digits from 1") {
    CHECK(parse_lesson_number("3") == 3);
    CHECK(parse_lesson_number("03") == 3);
    CHECK(parse_lesson_number("12") == 12);
    CHECK_FALSE(parse_lesson_number("0").has_value());
    CHECK_FALSE(parse_lesson_number("").has_value());
    CHECK_FALSE(parse_lesson_number("3a").has_value());
    CHECK_FALSE(parse_lesson_number("-3").has_value());
    CHECK_FALSE(parse_lesson_number("100").has_value());
}

TEST_CASE("lesson folders are found by the number their name starts with") {
    char pattern[] = "/tmp/mgpu-lessons-XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    const fs::path tree = pattern;
    for (const char* name : {"01-devices", "03-peer-to-peer", "notes", "3x-draft", "04"}) fs::create_directory(tree / name);
    {
        std::ofstream file(tree / "02-not-a-folder");
    }

    CHECK(lesson_folder(tree, 3) == tree / "03-peer-to-peer");
    CHECK(lesson_folder(tree, 1) == tree / "01-devices");
    CHECK_FALSE(lesson_folder(tree, 2).has_value());
    CHECK_FALSE(lesson_folder(tree, 4).has_value());
    CHECK(lessons_in(tree) == std::vector<int>{1, 3});
    CHECK(lessons_in(tree / "missing").empty());
    fs::remove_all(tree);
}

TEST_CASE("a missing lesson is explained with the lessons that exist") {
    char pattern[] = "/tmp/mgpu-lessons-XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    const fs::path tree = pattern;
    fs::create_directory(tree / "03-peer-to-peer");
    fs::create_directory(tree / "01-devices");
    std::string message = no_such_lesson(tree, 7);
    CHECK(message.find("no lesson 7") != std::string::npos);
    CHECK(message.find("(lessons there: 1, 3)") != std::string::npos);
    CHECK(no_such_lesson(tree / "empty", 2).find("(lessons there: none)") != std::string::npos);
    fs::remove_all(tree);
}
