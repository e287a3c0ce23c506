// LEMON reference for `hrm bench flow`: times NetworkSimplex and CostScaling on one DIMACS file.
//
// Bench-only helper (not part of libhrm or hrm): bench/flow-vs-lemon builds it with g++ against
// Debian's liblemon-dev.  Each solver is timed from the construction of its object (which
// copies the graph into its own arrays, as our solver builds its residual graph) to the end of
// run(); reading the file is excluded for both sides.  The value type is int when every
// capacity, supply and vertices x max |cost| fits (LEMON's fastest configuration), else long long.
#include <lemon/cost_scaling.h>
#include <lemon/dimacs.h>
#include <lemon/network_simplex.h>
#include <lemon/smart_graph.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

using namespace lemon;
typedef SmartDigraph Graph;

static double ms_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

template <typename T>
static int run_all(const Graph &g, const Graph::ArcMap<long long> &cap,
                   const Graph::ArcMap<long long> &cost, const Graph::NodeMap<long long> &sup,
                   int reps)
{
    Graph::ArcMap<T> c(g), w(g);
    Graph::NodeMap<T> s(g);
    for (Graph::ArcIt a(g); a != INVALID; ++a) {
        c[a] = (T)cap[a];
        w[a] = (T)cost[a];
    }
    for (Graph::NodeIt v(g); v != INVALID; ++v)
        s[v] = (T)sup[v];
    double best = -1, best_cpu = -1;
    long long ref = 0;
    const char *best_name = "";
    for (int which = 0; which < 2; which++) {
        double t_min = -1, cpu_min = -1;
        long long total = 0;
        bool ok = true;
        for (int r = 0; r < reps; r++) {
            auto t0 = std::chrono::steady_clock::now();
            std::clock_t c0 = std::clock();
            if (which == 0) {
                NetworkSimplex<Graph, T, T> ns(g);
                ns.upperMap(c).costMap(w).supplyMap(s);
                ok = ns.run() == NetworkSimplex<Graph, T, T>::OPTIMAL;
                total = ns.template totalCost<long long>();
            } else {
                CostScaling<Graph, T, T> cs(g);
                cs.upperMap(c).costMap(w).supplyMap(s);
                ok = cs.run() == CostScaling<Graph, T, T>::OPTIMAL;
                total = cs.template totalCost<long long>();
            }
            double ms = ms_since(t0);
            // CPU time (one thread): leaves out the time other processes hold the core
            double cpu = 1e3 * (double)(std::clock() - c0) / CLOCKS_PER_SEC;
            if (t_min < 0 || ms < t_min)
                t_min = ms;
            if (cpu_min < 0 || cpu < cpu_min)
                cpu_min = cpu;
        }
        static const char *names[] = {"network_simplex", "cost_scaling"};
        if (!ok) {
            std::printf("# lemon %s: not optimal (infeasible?)\n", names[which]);
            continue;
        }
        std::printf("BENCH lemon.%s_ms %.3f ms\n", names[which], t_min);
        std::printf("BENCH lemon.%s_cpu_ms %.3f ms\n", names[which], cpu_min);
        if (best_cpu < 0 || cpu_min < best_cpu)
            best_cpu = cpu_min;
        if (best < 0 || t_min < best) {
            best = t_min;
            best_name = names[which];
        }
        if (best_name[0] && ref == 0)
            ref = total;
        if (total != ref)
            std::printf("# lemon %s: cost %lld differs from %lld\n", names[which], total, ref);
    }
    std::printf("BENCH lemon.cost %lld units\n", ref);
    std::printf("BENCH lemon.best_ms %.3f ms\n", best);
    std::printf("BENCH lemon.best_cpu_ms %.3f ms\n", best_cpu);
    std::printf("# lemon best: %s\n", best_name);
    return best < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: flow_lemon FILE.min [REPEATS]\n");
        return 2;
    }
    int reps = argc > 2 ? std::atoi(argv[2]) : 1;
    std::ifstream in(argv[1]);
    if (!in) {
        std::fprintf(stderr, "flow_lemon: cannot open %s\n", argv[1]);
        return 2;
    }
    Graph g;
    Graph::ArcMap<long long> low(g), cap(g), cost(g);
    Graph::NodeMap<long long> sup(g);
    readDimacsMin(in, g, low, cap, cost, sup);
    long long maxv = 0, maxc = 0, n = countNodes(g);
    for (Graph::ArcIt a(g); a != INVALID; ++a) {
        if (low[a] != 0) {
            std::fprintf(stderr, "flow_lemon: lower bounds are not supported\n");
            return 2;
        }
        maxv = std::max(maxv, std::llabs(cap[a]));
        maxc = std::max(maxc, std::llabs(cost[a]));
    }
    long long total_sup = 0;
    for (Graph::NodeIt v(g); v != INVALID; ++v) {
        maxv = std::max(maxv, std::llabs(sup[v]));
        total_sup += std::llabs(sup[v]);
    }
    bool fits = maxv < (1LL << 30) && total_sup < (1LL << 30) && (n + 1) * maxc < (1LL << 30);
    std::printf("# lemon: %lld vertices, %d arcs, %s values\n", n, countArcs(g),
                fits ? "int" : "long long");
    return fits ? run_all<int>(g, cap, cost, sup, reps) : run_all<long long>(g, cap, cost, sup, reps);
}
