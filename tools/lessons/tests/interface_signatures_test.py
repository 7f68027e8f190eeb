#!/usr/bin/env python3
"""interface-signatures: the signatures come from the compiled source, and a name the source does not
define, or one written with its parameters, fails with a message that names it.

    interface_signatures_test.py TOOL CXX...   (the build passes the tool and the kit's compiler)
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

tool, compiler = sys.argv[1], sys.argv[2:]
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)


with tempfile.TemporaryDirectory() as work:
    work = Path(work)
    (work / "api.h").write_text(
        "#include <string>\n#include <vector>\n"
        "struct Scope { explicit Scope(int); ~Scope(); };\n"
        "int count(const std::vector<double>& weights, std::size_t n);\n"
        "std::string name_of(const std::string& key);\n")
    (work / "api.cpp").write_text(
        '#include "api.h"\n'
        "Scope::Scope(int) {}\nScope::~Scope() {}\n"
        "int count(const std::vector<double>& weights, std::size_t n) { return int(weights.size() + n); }\n"
        "std::string name_of(const std::string& key) { return key; }\n"
        "static int helper() { return 1; }\nint unlisted() { return helper(); }\n")

    def run(names):
        (work / "lesson.json").write_text(json.dumps({"interface": names}))
        output = work / "interface.json"
        output.unlink(missing_ok=True)
        done = subprocess.run([tool, "--lesson-json", str(work / "lesson.json"), "--source", str(work / "api.cpp"),
                               "--output", str(output), "--"] + compiler + ["-std=c++20", "-iquote", str(work)],
                              capture_output=True, text=True)
        return done, (json.loads(output.read_text())["signatures"] if output.exists() else None)

    done, signatures = run(["count", "name_of", "Scope::Scope", "Scope::~Scope"])
    check(done.returncode == 0, f"listed names: exit {done.returncode}: {done.stderr}")
    check(signatures == ["count(std::vector<double, std::allocator<double> > const&, unsigned long)",
                         "name_of(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)",
                         "Scope::Scope(int)", "Scope::~Scope()"],
          f"the compiler's spellings, in the manifest's order: {signatures}")

    done, signatures = run(["count", "missing_one"])
    check(done.returncode != 0 and signatures is None, "a name the source does not define fails the step")
    check("missing_one" in done.stderr and "interface" in done.stderr, f"and names it: {done.stderr}")

    done, signatures = run(["count(int)"])
    check(done.returncode != 0 and "without its parameters" in done.stderr,
          f"a name written with parameters is refused: {done.stderr}")

for failure in failures:
    print("FAILED:", failure)
if not failures:
    print("all checks passed")
sys.exit(1 if failures else 0)
