// `grade-class` end to end on a small class made from the kit's own lesson 1: the solution, the
// skeleton, a file that does not compile and a generated mutant. Graded twice: the second run is
// served from the gradebook's cache and writes the same grades.csv byte for byte; a student whose
// file changed is graded again. Lesson 1's checker is the cheapest to build and run, and one job
// keeps the test to one core while the rest of the suite runs beside it.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_invocation.h"

namespace fs = std::filesystem;

namespace {

const fs::path kSourceRoot = MGPU_TEST_SOURCE_ROOT;
const fs::path kMutants = MGPU_TEST_LESSON01_MUTANTS;

std::string read_text(const fs::path& path) {
    std::ifstream file(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

void write_text(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

struct TemporaryFolder {
    fs::path path;
    TemporaryFolder() {
        char pattern[] = "/tmp/mgpu-grade-class-XXXXXX";
        if (::mkdtemp(pattern) != nullptr) path = pattern;
    }
    ~TemporaryFolder() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
};

// student -> the CSV row's fields.
std::map<std::string, std::vector<std::string>> rows_of(const std::string& csv) {
    std::map<std::string, std::vector<std::string>> rows;
    std::istringstream lines(csv);
    std::string line;
    std::getline(lines, line);   // the header
    while (std::getline(lines, line)) {
        std::vector<std::string> fields;
        std::istringstream cells(line);
        std::string cell;
        while (std::getline(cells, cell, ',')) fields.push_back(cell);
        if (!fields.empty()) rows[fields.front()] = fields;
    }
    return rows;
}

double number(const std::string& text) { return std::stod(text); }

}  // namespace

TEST_CASE("a class is graded into one gradebook, and graded again from the cache with the same bytes") {
    TemporaryFolder work;
    const fs::path class_dir = work.path / "class";
    const fs::path out = work.path / "grades";
    const std::string solution = read_text(kSourceRoot / "solutions" / "01-devices" / "devices.cu");
    write_text(class_dir / "ada" / "01-devices" / "devices.cu", solution);
    write_text(class_dir / "bo" / "01-devices" / "devices.cu",
               read_text(kSourceRoot / "exercises" / "01-devices" / "devices.cu"));
    write_text(class_dir / "cy" / "devices.cu", solution + "\nthis line is not C++\n");   // the flat layout
    write_text(class_dir / "di" / "01-devices" / "devices.cu", read_text(kMutants / "scope-never-restores.cu"));

    const std::string command = "grade-class " + class_dir.string() + " --lesson 1 --out " + out.string() + " --jobs 1";
    CliResult first = run_cli(command);
    INFO(first.output);
    REQUIRE(first.code == 0);
    CHECK(first.output.find("[4/4]") != std::string::npos);
    CHECK(first.output.find("4 graded now, 0 from the cache") != std::string::npos);

    const std::string csv = read_text(out / "grades.csv");
    INFO(csv);
    CHECK(csv.rfind("student,lesson,score,max_score,status,counting,inventory,lookup,", 0) == 0);
    auto rows = rows_of(csv);
    REQUIRE(rows.size() == 4);
    CHECK(rows["ada"][2] == "100.00");
    CHECK(rows["ada"][3] == "100.00");
    CHECK(rows["ada"][4] == "graded");
    CHECK(rows["bo"][4] == "graded");
    CHECK(number(rows["bo"][2]) < 50);
    CHECK(rows["cy"][2] == "0.00");
    CHECK(rows["cy"][4] == "not built");
    CHECK(rows["di"][4] == "graded");
    CHECK(number(rows["di"][2]) < 100);
    CHECK(number(rows["di"][2]) > number(rows["bo"][2]));

    for (const char* student : {"ada", "bo", "cy", "di"}) {
        CHECK(fs::exists(out / student / "junit.xml"));
        auto results = nlohmann::json::parse(read_text(out / student / "results.json"), nullptr, false);
        REQUIRE_FALSE(results.is_discarded());
        CHECK(results["score"].get<double>() == doctest::Approx(number(rows[student][2])));
    }
    CHECK(read_text(out / "cy" / "results.json").find("compile error") != std::string::npos);

    CliResult second = run_cli(command);
    INFO(second.output);
    CHECK(second.code == 0);
    CHECK(second.output.find("0 graded now, 4 from the cache") != std::string::npos);
    CHECK(read_text(out / "grades.csv") == csv);

    // A changed file is graded again; the others stay in the cache.
    write_text(class_dir / "cy" / "devices.cu", solution + "\nstill not C++\n");
    CliResult third = run_cli(command);
    INFO(third.output);
    CHECK(third.code == 0);
    CHECK(third.output.find("1 graded now, 3 from the cache") != std::string::npos);
    CHECK(read_text(out / "grades.csv") == csv);
}

TEST_CASE("grade-class says what is wrong with its arguments") {
    CHECK(run_cli("grade-class /nonexistent-class --lesson 1").code == 2);
    CHECK(run_cli("grade-class " + kSourceRoot.string() + " --lesson 99").code == 2);
    CliResult missing = run_cli("grade-class " + kSourceRoot.string());
    CHECK(missing.code == 2);
    CHECK(missing.output.find("--lesson") != std::string::npos);
}
