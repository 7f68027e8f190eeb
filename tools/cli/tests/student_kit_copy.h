// A throw-away copy of what the student's commands (list, hint, reset, quiz, watch) read:
// exercises/, lessons/ and the checker's lesson.json files, so that the progress and files they
// write stay out of the kit the tests run from.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <unistd.h>

class StudentKitCopy {
public:
    StudentKitCopy(const std::filesystem::path& source_root, const std::string& name) {
        namespace fs = std::filesystem;
        std::string pattern = "/tmp/" + name + "-XXXXXX";
        if (::mkdtemp(pattern.data()) == nullptr) return;
        root = pattern;
        fs::copy(source_root / "exercises", root / "exercises", fs::copy_options::recursive);
        fs::copy(source_root / "lessons", root / "lessons", fs::copy_options::recursive);
        for (const auto& lesson : fs::directory_iterator(source_root / "checker" / "lessons")) {
            if (!fs::exists(lesson.path() / "lesson.json")) continue;
            fs::create_directories(root / "checker" / "lessons" / lesson.path().filename());
            fs::copy_file(lesson.path() / "lesson.json", root / "checker" / "lessons" / lesson.path().filename() / "lesson.json");
        }
    }
    ~StudentKitCopy() {
        std::error_code ignored;
        if (!root.empty()) std::filesystem::remove_all(root, ignored);
    }
    StudentKitCopy(const StudentKitCopy&) = delete;
    StudentKitCopy& operator=(const StudentKitCopy&) = delete;

    std::filesystem::path root;
};
