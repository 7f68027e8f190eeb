// The timeline page drawn from traces made by hand: its lanes, boxes, arrows, axis and escaping.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include <stdlib.h>
#include <unistd.h>

#include "mgpu/timeline.h"

namespace {

using mgpu::trace::ApiCall;
using mgpu::trace::DeviceOp;
using mgpu::trace::OpKind;
using mgpu::trace::Trace;

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t found = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++found;
    return found;
}

ApiCall call(std::uint64_t seq, const std::string& name, std::vector<long long> args, std::uint64_t stream,
             double begin = 0, double end = 0) {
    ApiCall c;
    c.seq = seq;
    c.name = name;
    c.args = std::move(args);
    c.stream = stream;
    c.begin_us = begin;
    c.end_us = end;
    c.text = name + "(...)";
    c.file = "/home/student/kit/exercises/03-peer-to-peer/peer_access.cu";
    c.line = int(seq) * 10;
    return c;
}

DeviceOp op(std::uint64_t seq, OpKind kind, const std::string& name, int device, std::uint64_t stream, double start,
            double end, const std::string& engine = "compute") {
    DeviceOp o;
    o.id = seq;
    o.api_seq = seq;
    o.kind = kind;
    o.name = name;
    o.device = device;
    o.stream = stream;
    o.start_us = start;
    o.end_us = end;
    o.engine = engine;
    return o;
}

// Lesson 3's pipeline in small: a copy on stream 16 (GPU 1), an event recorded after it, stream 17
// waits for it and runs a kernel; the host then waits for stream 17.
Trace pipeline() {
    Trace trace;
    trace.calls.push_back(call(1, "cudaStreamCreate", {}, 0));
    trace.calls.back().text = "cudaStreamCreate() -> stream#16";
    trace.calls.push_back(call(2, "cudaStreamCreate", {}, 0));
    trace.calls.back().text = "cudaStreamCreate() -> stream#17";
    trace.calls.push_back(call(3, "cudaMemcpyPeerAsync", {}, 16));
    trace.calls.push_back(call(4, "cudaEventRecord", {5, 16}, 16));
    trace.calls.push_back(call(5, "cudaStreamWaitEvent", {17, 5, 0}, 17));
    trace.calls.push_back(call(6, "cudaLaunchKernel", {}, 17));
    trace.calls.push_back(call(7, "cudaStreamSynchronize", {17}, 17, 1.0, 30.0));
    DeviceOp copy = op(3, OpKind::MemcpyPeer, "cudaMemcpyPeerAsync", 1, 16, 1.0, 11.0, "link 0->1");
    copy.src_device = 0;
    copy.dst_device = 1;
    copy.bytes = 4 << 20;
    trace.ops.push_back(copy);
    trace.ops.push_back(op(4, OpKind::EventRecord, "cudaEventRecord", 1, 16, 11.0, 11.0, ""));
    trace.ops.push_back(op(5, OpKind::StreamWait, "cudaStreamWaitEvent", 1, 17, 2.0, 11.0, ""));
    trace.ops.push_back(op(6, OpKind::Kernel, "scale_chunk", 1, 17, 11.0, 29.0));
    return trace;
}

}  // namespace

TEST_CASE("a lane per (device, stream), one per copy engine or link, one per waiting host thread") {
    const Trace trace = pipeline();
    const auto summary = mgpu::trace::summarize_timeline(trace);
    CHECK(summary.devices == 1);
    CHECK(summary.stream_lanes == 2);
    CHECK(summary.engine_lanes == 1);
    CHECK(summary.host_lanes == 1);
    CHECK(summary.boxes == 2);   // the copy and the kernel; records and waits are markers
    const std::string html = mgpu::trace::timeline_html(trace);
    CHECK(count(html, "data-lane=\"stream\"") == 2);
    CHECK(count(html, "data-lane=\"engine\"") == 1);
    CHECK(count(html, "data-lane=\"host\"") == 1);
    CHECK(html.find("data-stream=\"16\"") != std::string::npos);
    CHECK(html.find("data-stream=\"17\"") != std::string::npos);
    CHECK(html.find("GPU 1 \u00b7 link 0-&gt;1") != std::string::npos);
}

TEST_CASE("streams are named as the student created them, at their file and line") {
    const std::string html = mgpu::trace::timeline_html(pipeline());
    CHECK(html.find("GPU 1 \u00b7 stream#16") != std::string::npos);
    CHECK(html.find("created at peer_access.cu:10") != std::string::npos);
    CHECK(html.find("created at peer_access.cu:20") != std::string::npos);
}

TEST_CASE("an event wait is an arrow from its record; so is a host's cudaEventSynchronize") {
    Trace trace = pipeline();
    CHECK(mgpu::trace::summarize_timeline(trace).arrows == 1);
    trace.calls.push_back(call(8, "cudaEventSynchronize", {5}, 0, 30.0, 31.0));
    const auto summary = mgpu::trace::summarize_timeline(trace);
    CHECK(summary.arrows == 2);
    const std::string html = mgpu::trace::timeline_html(trace);
    CHECK(count(html, "data-arrow=\"event\"") == 2);
    CHECK(count(html, "marker-end=\"url(#arrowhead)\"") == 2);
    // A wait for an event never recorded draws nothing.
    trace.calls.push_back(call(9, "cudaStreamWaitEvent", {17, 99, 0}, 17));
    CHECK(mgpu::trace::summarize_timeline(trace).arrows == 2);
}

TEST_CASE("without record and wait markers (CUPTI), arrows join the work around the calls") {
    Trace trace = pipeline();
    std::erase_if(trace.ops, [](const DeviceOp& o) { return o.kind == OpKind::EventRecord || o.kind == OpKind::StreamWait; });
    CHECK(mgpu::trace::summarize_timeline(trace).arrows == 1);
}

TEST_CASE("hover titles carry name, start, end, bytes and link") {
    const std::string html = mgpu::trace::timeline_html(pipeline());
    CHECK(html.find("<title>cudaMemcpyPeerAsync (memcpy-peer)\nGPU 1, stream#16\nstart 1 us, end 11 us (10 us)\n"
                    "4194304 bytes (4 MiB)\nfrom GPU 0 to GPU 1\nengine: link 0-&gt;1") != std::string::npos);
    CHECK(html.find("enqueued at peer_access.cu:60") != std::string::npos);
}

TEST_CASE("names with < & \" and ' are escaped everywhere") {
    Trace trace = pipeline();
    trace.ops.back().name = "scale<float>&\"x\"'";
    mgpu::trace::TimelineOptions options;
    options.title = "run of <main.cu> & \"friends\"";
    options.notes = {"note <b>"};
    const std::string html = mgpu::trace::timeline_html(trace, options);
    CHECK(html.find("scale<float>") == std::string::npos);
    CHECK(html.find("<b>") == std::string::npos);
    CHECK(html.find("scale&lt;float&gt;&amp;&quot;x&quot;&#39;") != std::string::npos);
    CHECK(html.find("<title>run of &lt;main.cu&gt; &amp; &quot;friends&quot;</title>") != std::string::npos);
    CHECK(mgpu::trace::escape_html("a<b&c\"d'e>") == "a&lt;b&amp;c&quot;d&#39;e&gt;");
}

TEST_CASE("the page is self-contained: no script, no network") {
    const std::string html = mgpu::trace::timeline_html(pipeline());
    CHECK(html.find("<script") == std::string::npos);
    CHECK(html.find("http://") == html.find("http://www.w3.org/2000/svg"));
    CHECK(html.find("https://") == std::string::npos);
    CHECK(html.find("<svg") != std::string::npos);
    CHECK(html.rfind("</html>") != std::string::npos);
}

TEST_CASE("the time axis has ticks in microseconds") {
    const std::string html = mgpu::trace::timeline_html(pipeline());
    CHECK(html.find("time (\u00b5s)") != std::string::npos);
    CHECK(count(html, "class=\"tick\"") >= 5);
    CHECK(count(html, "class=\"tick\"") <= 12);
}

TEST_CASE("overlapping work on one lane is drawn on rows of its own") {
    Trace trace = pipeline();
    trace.ops.push_back(op(10, OpKind::Kernel, "other_thread_kernel", 1, 17, 12.0, 20.0));
    const std::string html = mgpu::trace::timeline_html(trace);
    const auto one = mgpu::trace::timeline_html(pipeline());
    CHECK(html.size() > one.size());
    CHECK(mgpu::trace::summarize_timeline(trace).stream_lanes == 2);
}

TEST_CASE("an empty trace says that nothing ran") {
    const std::string html = mgpu::trace::timeline_html(Trace{});
    CHECK(html.find("No device work was recorded") != std::string::npos);
    CHECK(count(html, "data-lane=") == 0);
}

TEST_CASE("the axis starts with the first work drawn, not at 0") {
    Trace trace = pipeline();
    for (auto& o : trace.ops) {
        o.start_us += 2500;
        o.end_us += 2500;
    }
    for (auto& c : trace.calls) {
        if (c.end_us > 0) {
            c.begin_us += 2500;
            c.end_us += 2500;
        }
    }
    const auto summary = mgpu::trace::summarize_timeline(trace);
    CHECK(summary.start_us == doctest::Approx(2501.0));
    CHECK(summary.end_us == doctest::Approx(2530.0));
    CHECK(mgpu::trace::timeline_html(trace).find(">2500</text>") == std::string::npos);
}

TEST_CASE("with read_source_names, a stream lane is named by the variable its creation filled") {
    char path[] = "/tmp/mgpu-timeline-source-XXXXXX";
    const int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    {
        std::ofstream source(path);
        for (int line = 1; line <= 30; ++line) {
            if (line == 10) source << "    RETURN_IF_FAILED(cudaStreamCreateWithFlags(&pipeline.copy_stream, cudaStreamNonBlocking));\n";
            else if (line == 20) source << "    cudaStreamCreate( & replicas[i].side_stream);\n";
            else source << "// line " << line << "\n";
        }
    }
    Trace trace = pipeline();
    trace.calls[0].file = trace.calls[1].file = path;
    mgpu::trace::TimelineOptions options;
    options.read_source_names = true;
    const std::string named = mgpu::trace::timeline_html(trace, options);
    ::close(fd);
    ::unlink(path);
    CHECK(named.find("GPU 1 \u00b7 pipeline.copy_stream</text>") != std::string::npos);
    CHECK(named.find("GPU 1 \u00b7 replicas[i].side_stream</text>") != std::string::npos);
    CHECK(named.find("stream#16, created at mgpu-timeline-source-") != std::string::npos);
    // Off by default, and a file that is gone leaves the trace's names.
    CHECK(mgpu::trace::timeline_html(trace).find("pipeline.copy_stream") == std::string::npos);
    CHECK(mgpu::trace::timeline_html(trace, options).find("GPU 1 \u00b7 stream#16</text>") != std::string::npos);
}
