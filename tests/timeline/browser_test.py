#!/usr/bin/env python3
"""`tools/mgpu timeline` in a real browser: draws lesson 3's solution on the simulator, loads the
page in headless Chromium (or Firefox), and fails on any console or script error, on SVG that is
not well-formed, and when the page does not show one lane per (device, stream) of the run's own
trace. Then it breaks a copy of the page twice (a script error, a lane taken out) and checks that
both are caught, so the test cannot pass by seeing nothing.

Usage: browser_test.py MGPU_CLI SOURCE_ROOT
Exit codes: 0 passed, 1 failed, 77 skipped (no browser installed; tools/mgpu test installs
tools/cli/test-packages.txt when it runs as root). With MGPU_REQUIRE_BROWSER=1 (set by .ci/run) a
missing browser fails the test instead.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree

SKIP = 77


def find_browser():
    for name in ("chromium", "chromium-browser", "google-chrome", "firefox-esr", "firefox"):
        path = shutil.which(name)
        if path:
            return name, path
    return None, None


def load_in_chromium(browser, page, profile):
    """The DOM after load, and the console lines Chromium logged."""
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0", "--virtual-time-budget=2000",
               "--dump-dom", "file://" + page]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError("the browser ended with %d:\n%s" % (done.returncode, done.stderr[-3000:]))
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
    return done.stdout, console


def load_in_firefox(browser, page, profile):
    """Firefox headless prints script errors on its console; it has no --dump-dom, so the page as
    loaded is checked through its screenshot (it loaded) and the file's own markup."""
    shot = os.path.join(profile, "shot.png")
    command = [browser, "--headless", "--no-remote", "--profile", profile, "--screenshot", shot, "file://" + page]
    env = dict(os.environ, MOZ_HEADLESS="1")
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, env=env)
    if done.returncode != 0 or not os.path.exists(shot):
        raise RuntimeError("the browser could not load the page (%d):\n%s" % (done.returncode, done.stderr[-3000:]))
    console = [line for line in done.stderr.splitlines() if "JavaScript error" in line or "Error:" in line]
    with open(page, encoding="utf-8") as text:
        return text.read(), console


def problems_of(browser_name, browser, page, stream_count, work):
    """What is wrong with the page as the browser shows it: a list of plain sentences."""
    profile = tempfile.mkdtemp(dir=work, prefix="profile-")
    if browser_name.startswith("firefox"):
        dom, console = load_in_firefox(browser, page, profile)
    else:
        dom, console = load_in_chromium(browser, page, profile)
    found = []
    for line in console:
        found.append("the browser's console reported: " + line.strip())
    svg = re.search(r"<svg\b.*?</svg>", dom, re.S)
    if not svg:
        found.append("the page shows no <svg> timeline")
        return found
    try:
        ElementTree.fromstring(svg.group(0))
    except ElementTree.ParseError as error:
        found.append("the timeline's SVG is not well-formed XML: %s" % error)
    lanes = len(re.findall(r'data-lane="stream"', svg.group(0)))
    if lanes != stream_count:
        found.append("the page shows %d stream lanes; the run's trace has %d (device, stream) tracks"
                     % (lanes, stream_count))
    if "<script" in dom and "undefined_function_of_the_broken_page" not in dom:
        found.append("the page carries a script; it must work without one")
    return found


def streams_in_trace(trace_file):
    """(device, stream) tracks of the Chrome trace the same run wrote: devices are processes 1 and up."""
    with open(trace_file, encoding="utf-8") as text:
        events = json.load(text)["traceEvents"]
    return len({(e["pid"], e["tid"]) for e in events
                if e.get("ph") == "M" and e.get("name") == "thread_name" and e.get("pid", 0) != 0})


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    cli, root = sys.argv[1], sys.argv[2]
    browser_name, browser = find_browser()
    if browser is None:
        reason = ("no browser installed (chromium or firefox-esr): the timeline page was not loaded. "
                  "Install the packages of tools/cli/test-packages.txt (tools/mgpu test does it when run as root).")
        if os.environ.get("MGPU_REQUIRE_BROWSER") == "1":
            print("FAILED: " + reason)
            return 1
        print("SKIPPED: " + reason)
        return SKIP
    solution = os.path.join(root, "solutions", "03-peer-to-peer")
    if not os.path.isdir(solution):
        print("SKIPPED: this edition of the kit has no solutions/ (lesson 3's solution is the program drawn)")
        return SKIP

    work = tempfile.mkdtemp(prefix="mgpu-timeline-browser-")
    try:
        # A copy named as the exercise folder runs as lesson 3 (its driver, its machine).
        program = os.path.join(work, "03-peer-to-peer")
        shutil.copytree(solution, program)
        page = os.path.join(work, "timeline.html")
        trace = os.path.join(work, "trace.json")
        done = subprocess.run([cli, "--kit-root", root, "timeline", program, "--schedule", "shuffle:3",
                               "--out", page, "--trace", trace], capture_output=True, text=True, timeout=600)
        print(done.stderr[-4000:])
        if done.returncode != 0 or not os.path.exists(page) or not os.path.exists(trace):
            print("FAILED: tools/mgpu timeline on lesson 3's solution ended with %d and wrote %s"
                  % (done.returncode, "the page" if os.path.exists(page) else "no page"))
            return 1
        if "timeline written to " + page not in done.stderr:
            print("FAILED: tools/mgpu timeline did not say where it wrote the page")
            return 1
        streams = streams_in_trace(trace)
        if streams < 2:
            print("FAILED: the run's trace has %d streams; lesson 3's pipeline uses at least two" % streams)
            return 1
        print("browser: %s; the trace has %d (device, stream) tracks" % (browser, streams))

        found = problems_of(browser_name, browser, page, streams, work)
        if found:
            print("FAILED: the timeline page of lesson 3's solution:")
            for problem in found:
                print("  - " + problem)
            return 1
        print("the page loads without errors and shows %d stream lanes, one per stream of the trace" % streams)

        # The check must be able to fail: a page with a script error, and a page missing a lane.
        with open(page, encoding="utf-8") as text:
            html = text.read()
        broken = os.path.join(work, "broken-script.html")
        with open(broken, "w", encoding="utf-8") as text:
            text.write(html.replace("</body>", "<script>undefined_function_of_the_broken_page();</script></body>"))
        if browser_name.startswith("chromium") or browser_name == "google-chrome":
            if not any("console" in p for p in problems_of(browser_name, browser, broken, streams, work)):
                print("FAILED: a page with a script error passed the check")
                return 1
        missing = os.path.join(work, "missing-lane.html")
        with open(missing, "w", encoding="utf-8") as text:
            text.write(html.replace('data-lane="stream"', 'data-lane="gone"', 1))
        if not any("stream lanes" in p for p in problems_of(browser_name, browser, missing, streams, work)):
            print("FAILED: a page missing a lane passed the check")
            return 1
        print("a page with a script error and a page missing a lane are both caught")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
