set -e
S=.kernel-scratch; B=/tmp/kb; mkdir -p $B
g++ -std=c++20 -O2 tools/cu2cpp/*.cpp -o $B/cu2cpp
$B/cu2cpp $S/perf.cu -o $B/perf.cpp
g++ -std=c++20 -O3 -DNDEBUG -Itools/sim/include -Itools/sim/src $B/perf.cpp $S/double.cpp tools/sim/src/kernel/*.cpp -lboost_context -o $B/perf
$B/perf
