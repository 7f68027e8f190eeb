set -e
S=$PWD/.kernel-scratch; B=/tmp/kb; mkdir -p $B
g++ -std=c++20 -O2 tools/cu2cpp/*.cpp -o $B/cu2cpp
$B/cu2cpp $S/perf3.cu -o $B/perf3.cpp
build() {  # name, sim tree
  g++ -std=c++20 -O3 -DNDEBUG -I$2/include -I$2/src $B/perf3.cpp $S/double.cpp $2/src/kernel/*.cpp $S/libboost_context.a -o $B/$1 2>/dev/null
}
rm -rf $B/v1 $B/v2; cp -r tools/sim $B/v1; cp -r tools/sim $B/v2
sed -i 's/        prefetch_next_in_line();//' $B/v1/include/mgpu/sim/block_scheduler.h
sed -i 's/offset_((color % 64) \* 320)/offset_(0)/' $B/v2/src/kernel/block_scheduler.cpp
build v0 tools/sim & build v1 $B/v1 & build v2 $B/v2 & wait
for i in 1 2 3; do for v in v0 v1 v2; do echo -n "$v: "; $B/$v | tail -1; done; done
