// grades.csv: sorted rows, fixed number format, quoting, and the columns of several lessons.
#include <doctest/doctest.h>

#include "gradebook.h"

using namespace mgpu::cli;

TEST_CASE("the gradebook sorts its rows and writes points with two decimals") {
    std::vector<LessonColumns> lessons = {{1, {"counting", "inventory"}}};
    std::vector<GradeRow> rows = {
        {"zoe", 1, 87.5, 100, "graded", {{"counting", 12.5}, {"inventory", 75}}},
        {"ada", 1, 100, 100, "graded", {{"counting", 25}, {"inventory", 75}}},
    };
    CHECK(gradebook_csv(rows, lessons) ==
          "student,lesson,score,max_score,status,counting,inventory\n"
          "ada,1,100.00,100.00,graded,25.00,75.00\n"
          "zoe,1,87.50,100.00,graded,12.50,75.00\n");
}

TEST_CASE("several lessons name their criteria by lesson and leave the other lessons' cells blank") {
    std::vector<LessonColumns> lessons = {{1, {"counting"}}, {3, {"peer checks"}}};
    std::vector<GradeRow> rows = {
        {"Doe, \"JD\"", 3, 0, 100, "kit error", {}},
        {"Doe, \"JD\"", 1, 33.333, 100, "not built", {{"counting", 0}}},
    };
    CHECK(gradebook_csv(rows, lessons) ==
          "student,lesson,score,max_score,status,L1 counting,L3 peer checks\n"
          "\"Doe, \"\"JD\"\"\",1,33.33,100.00,not built,0.00,\n"
          "\"Doe, \"\"JD\"\"\",3,0.00,100.00,kit error,,\n");
}

TEST_CASE("a gradebook row survives the cache") {
    GradeRow row{"bo", 2, 41.25, 100, "graded", {{"split", 41.25}}};
    auto back = row_from_json(row_to_json(row));
    REQUIRE(back);
    CHECK(back->student == "bo");
    CHECK(back->criteria.size() == 1);
    CHECK(back->score == doctest::Approx(41.25));
    CHECK_FALSE(row_from_json(nlohmann::json{{"student", "bo"}}));
}
