#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>
#include <chrono>
#include <cstdio>
#include <vector>
namespace ctx = boost::context;
double cpu_ns() { timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
int main() {
  for (int n : {2, 256, 1024}) {
    ctx::fiber back;
    std::vector<ctx::fiber> fibers;
    for (int i = 0; i < n; ++i)
      fibers.emplace_back(std::allocator_arg, ctx::protected_fixedsize_stack(256 * 1024), [&back](ctx::fiber&& c) {
        back = std::move(c);
        for (;;) back = std::move(back).resume();
        return std::move(back);
      });
    const int rounds = 20000000 / n;
    for (auto& f : fibers) f = std::move(f).resume();
    double t0 = cpu_ns();
    for (int r = 0; r < rounds; ++r)
      for (auto& f : fibers) f = std::move(f).resume();
    printf("main-centric fibers %4d: %.1f ns per thread visit (2 jumps)\n", n, (cpu_ns() - t0) / (double(rounds) * n));
    for (auto& f : fibers) f = ctx::fiber{};
  }
  // Ring: each fiber passes control straight to the next one, filing its own continuation.
  for (int n : {2, 256, 1024}) {
    std::vector<ctx::fiber> ring(n);
    ctx::fiber to_main;
    long hops = 0, limit = 20000000;
    int current = 0;
    auto body = [&](ctx::fiber&& from) {
      // first entry: file whoever resumed us
      if (current == 0) to_main = std::move(from); 
      for (;;) {
        if (++hops >= limit) { to_main = std::move(to_main).resume(); continue; }
        const int me = current;
        const int next = (me + 1) % n;
        current = next;
        std::move(ring[next]).resume_with([&ring, me](ctx::fiber&& mine) { ring[me] = std::move(mine); return ctx::fiber{}; });
      }
      return std::move(to_main);
    };
    for (int i = 0; i < n; ++i) ring[i] = ctx::fiber(std::allocator_arg, ctx::protected_fixedsize_stack(256 * 1024), body);
    // start: fiber 0 gets main; others are started lazily the first time they're resumed (from == previous fiber, filed by resume_with)
    double t0 = cpu_ns();
    std::move(ring[0]).resume();
    printf("direct ring fibers %4d: %.1f ns per hop (1 jump + filing)\n", n, (cpu_ns() - t0) / double(hops));
  }
}
