// group_harness.cc: runs the grouped kernels of agg.cu (group.cuh) on the
// CPU (emu.h) over random key and value columns and checks every group's
// words against a sequential reference: keys of every integer kind over
// domains of 1 to 4096 groups (null keys in their own group), values of
// integer and float kinds with nulls, selections with and without their own
// nulls, bit and element offsets, row counts around the tile, grids of one
// block and more, and domains folded in several windows, as the host does
// when a table does not fit in shared memory (integer tables of few groups
// in a copy a lane, merged by the block). Integers are checked exactly
// (128-bit sums, min, max, count, rows); floats bit for bit against the
// documented order of the float sums: each block's rows of a group folded in
// row order with State's addPair (a window of at most
// AGG_GROUP_FLOAT_WARP_GROUPS groups: each warp's rows, its tables merged in
// warp order; the kernels with a table per thread,
// arrowagg_group_threads_<float kind>: each thread's rows, its tables merged
// in FloatThreadTable's tree), the blocks' partials merged in block order. Every launch must leave its ticket zeroed; keys outside the domain
// are counted, not folded. The wide kernels (arrowagg_group_wide_<integer
// kind>: domains beyond AGG_GROUP_MAX in one table in device memory) are
// checked field by field against the exact reference, with each set of
// fields their flags ask for.
// Build and run: kernels/emu/run.sh
#include "emu.h"
#include "../agg.cu"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

typedef void (*GroupKern)(const void*, unsigned long long, const uint32_t*, unsigned long long, unsigned long long,
                          unsigned long long, unsigned long long, const void*, unsigned long long, const uint32_t*,
                          unsigned long long, const uint32_t*, unsigned long long, const uint32_t*,
                          unsigned long long, unsigned long long, unsigned long long, unsigned long long, uint64_t*,
                          unsigned int*, uint64_t*);

static std::mt19937_64 rng(7);
static int failures = 0, launches = 0;
#define CHECK(c, ...)                                  \
  do {                                                 \
    if (!(c)) {                                        \
      failures++;                                      \
      if (failures < 30) {                             \
        printf("FAIL %s:%d: ", __FILE__, __LINE__);    \
        printf(__VA_ARGS__);                           \
        printf("\n");                                  \
      }                                                \
    }                                                  \
  } while (0)

static std::vector<uint32_t> bitmap(uint64_t bits, double ones) {
  std::vector<uint32_t> v((bits + 31) / 32 + 2, 0);
  std::uniform_real_distribution<double> u(0, 1);
  for (uint64_t i = 0; i < v.size() * 32; i++)
    if (u(rng) < ones) v[i / 32] |= 1u << (i % 32);
  return v;
}
static bool bit(const std::vector<uint32_t>& v, uint64_t p) { return (v[p / 32] >> (p % 32)) & 1; }

// Case is one launch configuration.
struct Case {
  uint64_t n, groups, koff, kbit, voff, vbit, sbit, svbit;
  bool knulls, vnulls, sel, selnulls;
  unsigned grid;
  uint64_t window;  // groups per launch (the host's windows)
  uint64_t bad;     // rows given a key outside the domain
};

// Ref is a group's expected state: exact for integers; floats as the
// kernel's documented order gives them (a state per block, then merged).
struct Ref {
  uint64_t rows = 0, count = 0;
  __int128 sum = 0;
  __int128 mn = 0, mx = 0;  // integers, when count > 0
  std::vector<FloatFamily::State> blocks;  // floats: a state per block
  std::vector<FloatFamily::State> warps;   // floats: a state per block and warp (tables per warp)
  std::vector<FloatFamily::State> threads;  // floats: a state per block and thread (tables per thread)
};

// huge_values: float_value gives values near the doubles' largest too (the
// exact kernels' values then span more than their limbs).
static bool huge_values = true;

// near_zero: float_value gives, instead, values of two sizes whose sums
// keep crossing zero: +-2^20 (their sum is often exactly 0) and tiny ones
// of every significand bit set, so that the exact kernels' limbs above the
// tiny ones' digits are often all zeros or all ones, and carries and
// borrows ripple through them.
static bool near_zero = false;

static double float_value(std::mt19937_64& r) {
  if (near_zero) {
    const double sign = r() % 2 ? -1.0 : 1.0;
    if (r() % 2) return sign * 1048576.0;
    return sign * std::ldexp((double)((1ULL << 53) - 1), (int)(r() % 40) - 110);
  }
  switch (r() % 40) {
    case 0: return std::numeric_limits<double>::quiet_NaN();
    case 1: return std::numeric_limits<double>::infinity();
    case 2: return -std::numeric_limits<double>::infinity();
    case 3: return -0.0;
    case 4:
      if (!huge_values) break;
      return 1.5e308;  // sums overflow
    case 5:
    case 6:  // every bit of the significand set: digits of all ones (carries through a limb)
      return std::ldexp((r() % 2 ? -1.0 : 1.0) * (double)((1ULL << 53) - 1), (int)(r() % 48) - 70);
    default: break;
  }
  std::normal_distribution<double> nd(0, 1);
  return nd(r) * std::pow(10.0, (double)((int)(r() % 13) - 6));
}

template <typename T> static T random_value(std::mt19937_64& r) {
  if constexpr (std::is_floating_point<T>::value) {
    return (T)float_value(r);
  } else {
    T x;
    uint64_t u = r();
    std::memcpy(&x, &u, sizeof(T));
    return x;
  }
}

// ref_float_fold is State's addPair into a block's float state (words as
// the kernel's: sum, comp, special, min key, max key, count).
static void ref_float_fold(FloatFamily::State& s, double x) {
  s.w[5]++;
  if (x == x) {
    const int64_t k = key64(x);
    s.w[3] = (uint64_t)std::min((int64_t)s.w[3], k);
    s.w[4] = (uint64_t)std::max((int64_t)s.w[4], k);
  }
  double sum = as_f64(s.w[0]), comp = as_f64(s.w[1]), sp = as_f64(s.w[2]);
  const double t = sum + x;
  if (!std::isfinite(t)) {
    sp += t;
    sum = 0;
  } else {
    const double z = t - sum;
    comp += (sum - (t - z)) + (x - z);
    sum = t;
  }
  s.w[0] = f64_bits(sum), s.w[1] = f64_bits(comp), s.w[2] = f64_bits(sp);
}

// merge_order is merge_partials' fold of parts (group.cuh) for a window of
// p groups: S lanes, lane s merging parts s, s + S, ... in order, then the
// lanes' states in a tree.
static FloatFamily::State merge_order(const std::vector<FloatFamily::State>& parts, uint64_t p) {
  unsigned S = 1;
  while (S < kWarpThreads && 2 * S * p <= (uint64_t)kBlockThreads) S *= 2;
  std::vector<FloatFamily::State> lanes(S, FloatFamily::identity());
  for (size_t i = 0; i < parts.size(); i++) FloatFamily::merge(lanes[i % S], parts[i]);
  for (unsigned off = S / 2; off > 0; off /= 2)
    for (unsigned s = 0; s < off; s++)
      if (s + off < parts.size()) FloatFamily::merge(lanes[s], lanes[s + off]);
  return lanes[0];
}

// ref_int folds an integer value into a group's exact reference.
static void ref_int(Ref& r, __int128 v) {
  r.mn = r.count == 0 ? v : std::min(r.mn, v);
  r.mx = r.count == 0 ? v : std::max(r.mx, v);
  r.sum += v;
  r.count++;
}

// Rows are a case's columns: keys in the domain [kmin, kmin + groups) of
// KT (c.bad of them, at random rows, outside it), values, and the bitmaps
// of the keys' and values' validity, the selection and its validity.
template <typename KT, typename VT> struct Rows {
  uint64_t kmin;
  std::vector<KT> keys;
  std::vector<uint64_t> gid;
  std::vector<bool> outside;
  std::vector<VT> vals;
  std::vector<uint32_t> kvalid, vvalid, sel, selv;

  explicit Rows(const Case& c) : keys(c.koff + c.n + 4), gid(c.n), outside(c.n, false), vals(c.voff + c.n + 4) {
    // The domain: kmin so that [kmin, kmin + groups) fits KT.
    const uint64_t span = (uint64_t)std::numeric_limits<KT>::max() - (uint64_t)std::numeric_limits<KT>::min();
    const uint64_t room = span - (c.groups - 1);  // kmin - KT's min may go up to room
    const uint64_t koffset = room == UINT64_MAX ? rng() : rng() % (room + 1);
    kmin = widen_bits((KT)((uint64_t)std::numeric_limits<KT>::min() + koffset));
    for (uint64_t i = 0; i < c.n; i++) {
      gid[i] = rng() % c.groups;
      keys[c.koff + i] = (KT)(kmin + gid[i]);
    }
    for (auto& x : vals) x = random_value<VT>(rng);
    kvalid = bitmap(c.kbit + c.n, c.knulls ? 0.8 : 1.0);
    vvalid = bitmap(c.vbit + c.n, c.vnulls ? 0.7 : 1.0);
    sel = bitmap(c.sbit + c.n, c.sel ? 0.6 : 1.0);
    selv = bitmap(c.svbit + c.n, c.selnulls ? 0.9 : 1.0);
    for (uint64_t b = 0; b < c.bad && c.n > 0; b++) {
      const uint64_t i = rng() % c.n;
      if (outside[i]) continue;
      outside[i] = true;
      keys[c.koff + i] = (KT)(kmin + c.groups + rng() % 3);  // above the domain (KT may wrap: then below)
      if (c.groups + 3 > span) keys[c.koff + i] = (KT)(kmin - 1);
    }
  }

  // fold hands each selected row whose key is in the domain to row(g, i,
  // valid): g its group (c.groups for a null key), valid its value's
  // validity. It returns the selected rows whose key lay outside (in no
  // group).
  template <class F> uint64_t fold(const Case& c, F row) const {
    uint64_t bad = 0;
    for (uint64_t i = 0; i < c.n; i++) {
      if (c.sel && !bit(sel, c.sbit + i)) continue;
      if (c.selnulls && !bit(selv, c.svbit + i)) continue;
      uint64_t g = c.groups;
      if (!c.knulls || bit(kvalid, c.kbit + i)) {
        if (outside[i]) {
          bad++;
          continue;
        }
        g = gid[i];
      }
      row(g, i, !c.vnulls || bit(vvalid, c.vbit + i));
    }
    return bad;
  }

  // The bitmaps as the kernels take them (null: none).
  const uint32_t* kv(const Case& c) const { return c.knulls ? kvalid.data() : nullptr; }
  const uint32_t* vv(const Case& c) const { return c.vnulls ? vvalid.data() : nullptr; }
  const uint32_t* sv(const Case& c) const { return c.sel ? sel.data() : nullptr; }
  const uint32_t* svv(const Case& c) const { return c.selnulls ? selv.data() : nullptr; }
};

// launch_window launches grouped kernel k (any of the grouped kernels:
// their parameters up to out are the same; extra follow) over case c's
// rows rs, for the window of p groups from g0.
template <class Kern, typename KT, typename VT, typename... Extra>
static void launch_window(Kern k, const Case& c, const Rows<KT, VT>& rs, uint32_t kkind, size_t shared, uint64_t g0,
                          uint64_t p, uint64_t* partials, unsigned* ticket, uint64_t* out, Extra... extra) {
  emu_launch_shared(k, c.grid, (unsigned)kBlockThreads, shared, (const void*)rs.keys.data(), (unsigned long long)c.koff,
                    rs.kv(c), (unsigned long long)c.kbit, (unsigned long long)kkind, (unsigned long long)rs.kmin,
                    (unsigned long long)c.groups, (const void*)rs.vals.data(), (unsigned long long)c.voff, rs.vv(c),
                    (unsigned long long)c.vbit, rs.sv(c), (unsigned long long)c.sbit, rs.svv(c),
                    (unsigned long long)c.svbit, (unsigned long long)c.n, (unsigned long long)g0,
                    (unsigned long long)p, partials, ticket, out, extra...);
}

// tree_order is FloatThreadTable::settle's merge of a block's threads'
// states (kBlockThreads of them, at st): thread t takes t + off's, off =
// kBlockThreads / 2, ..., 1.
static FloatFamily::State tree_order(const FloatFamily::State* st) {
  std::vector<FloatFamily::State> a(st, st + kBlockThreads);
  for (unsigned off = kBlockThreads / 2; off > 0; off /= 2)
    for (unsigned t = 0; t < off; t++) FloatFamily::merge(a[t], a[t + off]);
  return a[0];
}

// Table is the float tables of a kernel: the grouped kernels' (a table per
// warp up to AGG_GROUP_FLOAT_WARP_GROUPS groups, one table past that), or
// those of arrowagg_group_threads_<kind> (a table per thread).
enum class Table { kernel, threads, exact };

typedef void (*ExactKern)(const void*, unsigned long long, const uint32_t*, unsigned long long, unsigned long long,
                          unsigned long long, unsigned long long, const void*, unsigned long long, const uint32_t*,
                          unsigned long long, const uint32_t*, unsigned long long, const uint32_t*,
                          unsigned long long, unsigned long long, unsigned long long, unsigned long long, uint64_t*,
                          unsigned int*, uint64_t*, const unsigned int*, unsigned int*);
typedef void (*ScaleKern)(const void*, unsigned long long, const uint32_t*, unsigned long long, unsigned long long,
                          unsigned int*);

// I256 is a signed 256-bit integer (two's complement, w[0] the lowest
// word): the exact reference of a block's sum of a group in units 2^base.
struct I256 {
  uint64_t w[4] = {0, 0, 0, 0};
  void add(const I256& v) {
    unsigned __int128 c = 0;
    for (int k = 0; k < 4; k++) {
      c += (unsigned __int128)w[k] + v.w[k];
      w[k] = (uint64_t)c;
      c >>= 64;
    }
  }
  // shifted is +-m * 2^sh (0 <= sh, m * 2^sh < 2^192).
  static I256 shifted(uint64_t m, int sh, bool neg) {
    I256 v;
    const int q = sh / 64, r = sh % 64;
    v.w[q] = m << r;
    if (r != 0 && q < 3) v.w[q + 1] = m >> (64 - r);
    if (neg) {
      uint64_t carry = 1;
      for (int k = 0; k < 4; k++) {
        v.w[k] = ~v.w[k] + carry;
        carry = carry && v.w[k] == 0;
      }
    }
    return v;
  }
  long double approx() const {
    const bool neg = (int64_t)w[3] < 0;
    I256 m = *this;
    if (neg) m = negate(*this);
    long double x = 0;
    for (int k = 3; k >= 0; k--) x = x * 18446744073709551616.0L + (long double)m.w[k];
    return neg ? -x : x;
  }
  static I256 negate(const I256& a) {
    I256 v;
    uint64_t carry = 1;
    for (int k = 0; k < 4; k++) {
      v.w[k] = ~a.w[k] + carry;
      carry = carry && v.w[k] == 0;
    }
    return v;
  }
};

// exact_units is finite double x as an integer of units 2^base (x must be
// one: its lowest set bit at or above 2^base).
static I256 exact_units(double x, int base, bool& ok) {
  int e;
  uint64_t m = exact_bits(x, e);
  ok = true;
  if (m == 0) return I256{};
  int sh = e - base;
  if (sh < 0) {
    ok = (m & ((1ULL << -sh) - 1)) == 0 && -sh < 64;
    m >>= -sh, sh = 0;
  }
  return I256::shifted(m, sh, x < 0);
}

// exact_state is a block's expected state of a group in the exact kernels:
// its exact sum x (units 2^base) through exact_pair, its special (the sum
// of its non-finite values), extremes and count.
static FloatFamily::State exact_state(const I256& x, int base, double special, const FloatFamily::State& ext) {
  uint32_t d[kExactLimbs];
  for (int k = 0; k < kExactLimbs; k++) d[k] = (uint32_t)(x.w[k / 2] >> (32 * (k % 2)));
  const int64_t top = (int64_t)((x.w[2] >> 32) | (x.w[3] << 32));
  double s, c;
  exact_pair(d, top, base, s, c, [&](double inf) { special += inf; });
  FloatFamily::State st = ext;
  st.w[0] = f64_bits(s), st.w[1] = f64_bits(c), st.w[2] = f64_bits(special);
  return st;
}

// run_case runs kernel k, whose float tables are t's, over case c's rows.
template <typename KT, typename VT>
static void run_case(GroupKern k, uint32_t kkind, const Case& c, const char* name, Table t = Table::kernel) {
  const bool threads = t == Table::threads;
  constexpr bool kFloat = std::is_floating_point<VT>::value;
  constexpr bool kSigned = VT(-1) < VT(0);
  constexpr int K = kFloat ? AGG_FLOAT_WORDS : AGG_INTEGER_WORDS, W = K + 1;
  const Rows<KT, VT> rs(c);

  // The reference, groups 0 .. groups (the null key's).
  std::vector<Ref> ref(c.groups + 1);
  for (auto& r : ref) {
    FloatFamily::State id = FloatFamily::identity();
    r.blocks.assign(c.grid, id);
    r.warps.assign(c.grid * kBlockWarps, id);
    if (threads) r.threads.assign((size_t)c.grid * kBlockThreads, id);
  }
  const uint64_t want_bad = rs.fold(c, [&](uint64_t g, uint64_t i, bool valid) {
    Ref& r = ref[g];
    r.rows++;
    if (!valid) return;
    const VT x = rs.vals[c.voff + i];
    if constexpr (kFloat) {
      const unsigned block = (unsigned)((i / kGroupTile) % c.grid);
      const unsigned warp = (unsigned)((i % kGroupTile) / (kWarpThreads * kGroupItems));
      ref_float_fold(r.blocks[block], (double)x);
      ref_float_fold(r.warps[block * kBlockWarps + warp], (double)x);
      if (threads) ref_float_fold(r.threads[(size_t)block * kBlockThreads + (i % kGroupTile) % kBlockThreads], (double)x);
      r.count++;
    } else {
      ref_int(r, kSigned ? (__int128)(int64_t)x : (__int128)(uint64_t)x);
    }
  });

  // The launches, a window each.
  uint64_t got_bad = 0;
  for (uint64_t g0 = 0; g0 <= c.groups; g0 += c.window) {
    const uint64_t p = std::min(c.window, c.groups + 1 - g0);
    std::vector<uint64_t> partials(c.grid * (W * p + 1), 0xdeadbeefdeadbeefULL), out(W * p + 1, 0xabad1deaULL);
    std::vector<unsigned> ticket(1 + (c.grid + kGroupCluster - 1) / kGroupCluster, 0);
    const bool warps = kFloat && !threads && p <= AGG_GROUP_FLOAT_WARP_GROUPS;  // (a table per warp)
    const size_t shared = threads  ? FloatThreadTable<VT>::bytes(p)
                          : warps  ? FloatWarpTable<VT>::bytes(p)
                          : kFloat ? FloatTable<VT>::bytes(p)
                                   : IntTable<VT, SignedFamily>::bytes(p);
    CHECK(t != Table::kernel || shared <= AGG_GROUP_SHARED_BYTES, "%s: a table of %llu groups: %zu bytes", name,
          (unsigned long long)p, shared);
    launch_window(k, c, rs, kkind, shared, g0, p, partials.data(), ticket.data(), out.data());
    launches++;
    for (size_t i = 0; i < ticket.size(); i++) CHECK(ticket[i] == 0, "%s: ticket %zu not reset: %u", name, i, ticket[i]);
    got_bad += out[W * p];
    CHECK(out[W * p] == want_bad, "%s n=%llu: %llu keys outside the domain, want %llu", name,
          (unsigned long long)c.n, (unsigned long long)out[W * p], (unsigned long long)want_bad);
    for (uint64_t j = 0; j < p; j++) {
      const Ref& r = ref[g0 + j];
      const uint64_t* w = &out[j * W];
      char what[160];
      snprintf(what, sizeof what, "%s n=%llu groups=%llu grid=%u window=%llu group %llu", name,
               (unsigned long long)c.n, (unsigned long long)c.groups, c.grid, (unsigned long long)c.window,
               (unsigned long long)(g0 + j));
      CHECK(w[K] == r.rows, "%s: rows %llu, want %llu", what, (unsigned long long)w[K], (unsigned long long)r.rows);
      if constexpr (kFloat) {
        // A table per warp: each block's state is its warps' (each the
        // sequential fold of the warp's rows), merged in warp order.
        // The device layer (group_finish): each cluster's blocks merged,
        // then the clusters', each by merge_partials' order.
        std::vector<FloatFamily::State> blocks, clusters;
        for (unsigned b = 0; b < c.grid; b++) {
          FloatFamily::State bs = r.blocks[b];
          if (threads) bs = tree_order(&r.threads[(size_t)b * kBlockThreads]);
          if (warps) {
            bs = FloatFamily::identity();
            for (int w = 0; w < kBlockWarps; w++) FloatFamily::merge(bs, r.warps[b * kBlockWarps + w]);
          }
          blocks.push_back(bs);
        }
        for (unsigned f = 0; f < c.grid; f += kGroupCluster)
          clusters.push_back(merge_order(std::vector<FloatFamily::State>(
                                             blocks.begin() + f, blocks.begin() + std::min(c.grid, f + kGroupCluster)),
                                         p));
        const FloatFamily::State want = merge_order(clusters, p);
        // A NaN's sign and payload are the compiler's choice of operand
        // order (x86 keeps the first NaN operand's, a GPU makes its own
        // NaN): a NaN word must be a NaN, any other word the same bits.
        for (int i = 0; i < K; i++) {
          const bool nan = i < 3 && std::isnan(as_f64(want.w[i]));
          CHECK(nan ? std::isnan(as_f64(w[i])) : w[i] == want.w[i], "%s: word %d %016llx, want %016llx", what, i,
                (unsigned long long)w[i], (unsigned long long)want.w[i]);
        }
        CHECK(w[5] == r.count, "%s: count", what);
      } else {
        const __int128 sum = (__int128)(((unsigned __int128)w[1] << 64) | w[0]);
        CHECK(sum == r.sum, "%s: sum differs", what);
        CHECK(w[4] == r.count, "%s: count %llu, want %llu", what, (unsigned long long)w[4],
              (unsigned long long)r.count);
        if (r.count > 0) {
          const __int128 mn = kSigned ? (__int128)(int64_t)w[2] : (__int128)w[2];
          const __int128 mx = kSigned ? (__int128)(int64_t)w[3] : (__int128)w[3];
          CHECK(mn == r.mn && mx == r.mx, "%s: min/max differ", what);
        }
      }
    }
  }
  (void)got_bad;
}

// cases are the configurations for keys of `span` values (the domain's
// limit) and values of a table of entry bytes.
static std::vector<Case> cases(uint64_t span, bool floats) {
  std::vector<Case> cs;
  const uint64_t groups[] = {1, 2, 3, 10, 97, 300, 1000, 4096};
  const uint64_t ns[] = {0, 1, 37, 2047, 2049, 5000, 9000};
  const unsigned grids[] = {1, 2, 3, 5};
  const uint64_t max_window =
      floats ? (AGG_GROUP_SHARED_BYTES - AGG_GROUP_FLOAT_STAGE_BYTES) / AGG_GROUP_FLOAT_ENTRY_BYTES
             : AGG_GROUP_SHARED_BYTES / AGG_GROUP_INT_ENTRY_BYTES;
  for (uint64_t g : groups) {
    if (g - 1 > span) continue;
    for (int rep = 0; rep < 2; rep++) {
      Case c{};
      c.groups = g;
      c.n = ns[rng() % 7];
      c.koff = rng() % 9, c.kbit = rng() % 40, c.voff = rng() % 9, c.vbit = rng() % 40;
      c.sbit = rng() % 40, c.svbit = rng() % 40;
      c.knulls = rng() % 2, c.vnulls = rng() % 2, c.sel = rng() % 2, c.selnulls = rng() % 3 == 0;
      // Now and then two or three clusters of blocks (group_finish's two
      // levels; rarely: the emulation's blocks are slow).
      c.grid = rng() % 8 == 0 ? (rng() % 2 ? 17 : 35) : grids[rng() % 4];
      // One window when the table fits, else the host's; now and then
      // smaller windows (odd sizes) to fold the domain in more launches.
      c.window = std::min(g + 1, max_window);
      if (rng() % 3 == 0) c.window = 1 + rng() % c.window;
      c.bad = rng() % 4 == 0 && g + 1 < span ? 1 + rng() % 5 : 0;
      cs.push_back(c);
    }
  }
  return cs;
}

// cases_of are configurations of domains of each of groups groups (three
// each), in one window or several.
static std::vector<Case> cases_of(std::initializer_list<uint64_t> groups) {
  std::vector<Case> cs;
  for (uint64_t g : groups) {
    for (int rep = 0; rep < 3; rep++) {
      Case c{};
      c.groups = g;
      c.n = (uint64_t[]){0, 1, 37, 2049, 5000, 9000, 20000}[rng() % 7];
      c.koff = rng() % 9, c.kbit = rng() % 40, c.voff = rng() % 9, c.vbit = rng() % 40;
      c.sbit = rng() % 40, c.svbit = rng() % 40;
      c.knulls = rng() % 2, c.vnulls = rng() % 2, c.sel = rng() % 2, c.selnulls = rng() % 3 == 0;
      c.grid = rng() % 6 == 0 ? 17 : 1 + rng() % 4;
      c.window = rng() % 3 == 0 ? 1 + rng() % (g + 1) : g + 1;
      c.bad = rng() % 4 == 0 ? 1 + rng() % 5 : 0;
      cs.push_back(c);
    }
  }
  return cs;
}

// cases_threads are the configurations of the float kernels with a table
// per thread: domains of a few groups.
static std::vector<Case> cases_threads() { return cases_of({1, 2, 3, 10, 17, 40}); }

template <typename KT, typename VT> static void test_threads(GroupKern k, uint32_t kkind, const char* name) {
  const int before = failures;
  for (const Case& c : cases_threads()) run_case<KT, VT>(k, kkind, c, name, Table::threads);
  printf("%-22s %s\n", name, failures == before ? "ok" : "FAILED");
}

template <typename KT, typename VT> static void test(GroupKern k, uint32_t kkind, const char* name) {
  const uint64_t span = (uint64_t)std::numeric_limits<KT>::max() - (uint64_t)std::numeric_limits<KT>::min();
  const int before = failures;
  for (const Case& c : cases(span, std::is_floating_point<VT>::value)) run_case<KT, VT>(k, kkind, c, name);
  printf("%-22s %s\n", name, failures == before ? "ok" : "FAILED");
}

// run_exact runs the scale kernel sk and then the exact kernel k over case
// c's rows (Table::exact): the scale words against the column's, then, when
// the scale fits the limbs, every group's words against exact_state of
// each block's exact sum merged in the device layer's order (the extremes,
// counts and rows as the other tables'), and each block's pair within
// 2^-104 of its exact sum; when it does not, the lost word alone.
template <typename KT, typename VT>
static void run_exact(ExactKern k, ScaleKern sk, uint32_t kkind, const Case& c, const char* name) {
  constexpr int K = AGG_FLOAT_WORDS, W = K + 1;
  const Rows<KT, VT> rs(c);
  // The scale of the column's rows.
  unsigned want_hi = 0, want_lo = 0;
  for (uint64_t i = 0; i < c.n; i++) {
    if (c.vnulls && !bit(rs.vvalid, c.vbit + i)) continue;
    const double v = (double)rs.vals[c.voff + i];
    int e;
    const uint64_t m = std::isfinite(v) ? exact_bits(v, e) : 0;
    if (m == 0) continue;
    want_hi = std::max(want_hi, (unsigned)(f64_bits(v) >> 52) & 0x7ffu);
    want_lo = std::max(want_lo, (unsigned)(1100 - (e + __builtin_ctzll(m))));
  }
  std::vector<unsigned> scale(2, 0);
  emu_launch(sk, c.grid, (unsigned)kBlockThreads, (const void*)rs.vals.data(), (unsigned long long)c.voff, rs.vv(c),
             (unsigned long long)c.vbit, (unsigned long long)c.n, scale.data());
  launches++;
  CHECK(scale[0] == want_hi && scale[1] == want_lo, "%s n=%llu: scale %u %u, want %u %u", name,
        (unsigned long long)c.n, scale[0], scale[1], want_hi, want_lo);
  const ExactScale es(want_hi, want_lo);

  // The reference: a block's exact sum, special and other fields of each group.
  struct Block {
    I256 sum;
    double special = 0;
    FloatFamily::State ext = FloatFamily::identity();
  };
  std::vector<std::vector<Block>> ref(c.groups + 1, std::vector<Block>(c.grid));
  std::vector<uint64_t> rows(c.groups + 1, 0);
  const uint64_t want_bad = rs.fold(c, [&](uint64_t g, uint64_t i, bool valid) {
    rows[g]++;
    if (!valid) return;
    Block& b = ref[g][(i / kGroupTile) % c.grid];
    const double x = (double)rs.vals[c.voff + i];
    ref_float_fold(b.ext, x);  // (its extremes and count)
    if (!std::isfinite(x)) {
      b.special += x;
      return;
    }
    bool ok;
    const I256 u = exact_units(x, es.base, ok);
    if (es.fits) CHECK(ok, "%s: a value of a fitting scale loses bits", name);
    b.sum.add(u);
  });

  for (uint64_t g0 = 0; g0 <= c.groups; g0 += c.window) {
    const uint64_t p = std::min(c.window, c.groups + 1 - g0);
    std::vector<uint64_t> partials(c.grid * (W * p + 1), 0xdeadbeefdeadbeefULL), out(W * p + 1, 0xabad1deaULL);
    std::vector<unsigned> ticket(1 + (c.grid + kGroupCluster - 1) / kGroupCluster, 0);
    unsigned lost = 0;
    const size_t shared = FloatExactTable<VT>::bytes(p);
    CHECK(shared <= AGG_GROUP_SHARED_BYTES, "%s: an exact table of %llu groups: %zu bytes", name,
          (unsigned long long)p, shared);
    launch_window(k, c, rs, kkind, shared, g0, p, partials.data(), ticket.data(), out.data(),
                  (const unsigned*)scale.data(), &lost);
    launches++;
    for (size_t i = 0; i < ticket.size(); i++) CHECK(ticket[i] == 0, "%s: ticket %zu not reset: %u", name, i, ticket[i]);
    CHECK(lost == (es.fits ? 0u : 1u), "%s n=%llu: lost %u, the scale %s", name, (unsigned long long)c.n, lost,
          es.fits ? "fits" : "does not fit");
    if (!es.fits) continue;
    CHECK(out[W * p] == want_bad, "%s n=%llu: %llu keys outside the domain, want %llu", name,
          (unsigned long long)c.n, (unsigned long long)out[W * p], (unsigned long long)want_bad);
    for (uint64_t j = 0; j < p; j++) {
      const uint64_t g = g0 + j;
      const uint64_t* w = &out[j * W];
      char what[160];
      snprintf(what, sizeof what, "%s n=%llu groups=%llu grid=%u window=%llu group %llu", name,
               (unsigned long long)c.n, (unsigned long long)c.groups, c.grid, (unsigned long long)c.window,
               (unsigned long long)g);
      CHECK(w[K] == rows[g], "%s: rows %llu, want %llu", what, (unsigned long long)w[K], (unsigned long long)rows[g]);
      std::vector<FloatFamily::State> blocks, clusters;
      for (unsigned b = 0; b < c.grid; b++) {
        const Block& r = ref[g][b];
        const FloatFamily::State st = exact_state(r.sum, es.base, r.special, r.ext);
        blocks.push_back(st);
        // The pair against the exact sum: both are integers of units 2^base.
        bool ok1, ok2;
        I256 rest = r.sum;
        rest.add(I256::negate(exact_units(as_f64(st.w[0]), es.base, ok1)));
        rest.add(I256::negate(exact_units(as_f64(st.w[1]), es.base, ok2)));
        CHECK(ok1 && ok2, "%s: block %u's pair is not of units 2^base", what, b);
        CHECK(std::fabs(rest.approx()) <= std::ldexp(std::fabs(r.sum.approx()), -104), "%s: block %u's pair is %Lg off",
              what, b, rest.approx());
      }
      for (unsigned f = 0; f < c.grid; f += kGroupCluster)
        clusters.push_back(merge_order(
            std::vector<FloatFamily::State>(blocks.begin() + f, blocks.begin() + std::min(c.grid, f + kGroupCluster)), p));
      const FloatFamily::State want = merge_order(clusters, p);
      for (int i = 0; i < K; i++) {
        const bool nan = i < 3 && std::isnan(as_f64(want.w[i]));
        CHECK(nan ? std::isnan(as_f64(w[i])) : w[i] == want.w[i], "%s: word %d %016llx, want %016llx", what, i,
              (unsigned long long)w[i], (unsigned long long)want.w[i]);
      }
    }
  }
}

// cases_exact are the configurations of the exact float kernels: domains
// of 1 to 600 groups (one table within AGG_GROUP_SHARED_BYTES).
static std::vector<Case> cases_exact() { return cases_of({1, 2, 10, 40, 97, 300, 600}); }

// test_exact runs the exact kernels' cases over values within their limbs
// (for a third of them, values whose sums keep crossing zero: near_zero)
// and, for a third, over values that are not (the launch folds nothing and
// says so).
template <typename KT, typename VT> static void test_exact(ExactKern k, ScaleKern sk, uint32_t kkind, const char* name) {
  const int before = failures;
  int i = 0;
  for (const Case& c : cases_exact()) {
    huge_values = i % 3 == 2, near_zero = i % 3 == 1;
    i++;
    run_exact<KT, VT>(k, sk, kkind, c, name);
  }
  huge_values = true, near_zero = false;
  printf("%-22s %s\n", name, failures == before ? "ok" : "FAILED");
}

typedef void (*WideKern)(const void*, unsigned long long, const uint32_t*, unsigned long long, unsigned long long,
                         unsigned long long, unsigned long long, const void*, unsigned long long, const uint32_t*,
                         unsigned long long, const uint32_t*, unsigned long long, const uint32_t*,
                         unsigned long long, unsigned long long, unsigned long long, uint64_t*);

// run_wide runs a wide kernel (arrowagg_group_wide_<kind>) over random
// rows of `groups` keys and checks its table, field by field (group.cuh),
// against the exact reference: the 128-bit sum lo + 2^64 wraps, the
// extremes' order keys, rows (hi: 2^32 rows + wraps) and counts; the fields the flags leave out stay zero,
// and keys outside the domain are counted, not folded.
template <typename KT, typename VT> static void run_wide(WideKern k, uint32_t kkind, const char* name) {
  constexpr bool kSigned = VT(-1) < VT(0);
  const uint64_t span = (uint64_t)std::numeric_limits<KT>::max() - (uint64_t)std::numeric_limits<KT>::min();
  const int before = failures;
  const uint64_t groupss[] = {1, 7, 4097, 20000, 70000};
  const uint64_t ns[] = {0, 1, 2049, 9000, 40000};
  for (uint64_t groups : groupss) {
    if (groups - 1 > span) continue;
    for (int rep = 0; rep < 3; rep++) {
      Case c{};
      c.groups = groups;
      c.n = ns[rng() % 5];
      c.koff = rng() % 9, c.kbit = rng() % 40, c.voff = rng() % 9, c.vbit = rng() % 40;
      c.sbit = rng() % 40, c.svbit = rng() % 40;
      c.knulls = rng() % 2, c.vnulls = rng() % 2, c.sel = rng() % 2, c.selnulls = rng() % 3 == 0;
      c.grid = 1 + rng() % 5;
      c.bad = groups + 3 < span ? rng() % 6 : 0;
      const unsigned flags = rep == 0 ? 3 : (unsigned)(rng() % 4);
      const uint64_t d = groups + 1, n = c.n;
      const Rows<KT, VT> rs(c);
      std::vector<Ref> ref(d);
      const uint64_t want_bad = rs.fold(c, [&](uint64_t g, uint64_t i, bool valid) {
        ref[g].rows++;
        if (valid) ref_int(ref[g], kSigned ? (__int128)(int64_t)rs.vals[c.voff + i] : (__int128)(uint64_t)rs.vals[c.voff + i]);
      });
      std::vector<uint64_t> table(5 * d + 1, 0);
      emu_launch(k, c.grid, (unsigned)kBlockThreads, (const void*)rs.keys.data(), (unsigned long long)c.koff, rs.kv(c),
                 (unsigned long long)c.kbit, (unsigned long long)kkind, (unsigned long long)rs.kmin,
                 (unsigned long long)groups, (const void*)rs.vals.data(), (unsigned long long)c.voff, rs.vv(c),
                 (unsigned long long)c.vbit, rs.sv(c), (unsigned long long)c.sbit, rs.svv(c),
                 (unsigned long long)c.svbit, (unsigned long long)n, (unsigned long long)flags, table.data());
      launches++;
      const uint64_t *lo = &table[0], *hi = &table[d], *ext = &table[2 * d];
      const uint32_t* cnt = (const uint32_t*)&table[4 * d];
      CHECK(table[5 * d] == want_bad, "%s wide: %llu keys outside the domain, want %llu", name,
            (unsigned long long)table[5 * d], (unsigned long long)want_bad);
      for (uint64_t g = 0; g < d; g++) {
        const Ref& r = ref[g];
        char what[160];
        snprintf(what, sizeof what, "%s wide n=%llu groups=%llu grid=%u flags=%u group %llu", name,
                 (unsigned long long)n, (unsigned long long)groups, c.grid, flags, (unsigned long long)g);
        // hi: 2^32 rows + the sum's wraps (signed, in the low half).
        const int64_t wraps = (int32_t)(uint32_t)hi[g];
        const uint64_t rows = (hi[g] - (uint64_t)wraps) >> 32;
        CHECK(rows == r.rows, "%s: rows %llu, want %llu", what, (unsigned long long)rows, (unsigned long long)r.rows);
        CHECK(cnt[g] == (c.vnulls ? r.count : 0), "%s: count %u, want %llu", what, cnt[g], (unsigned long long)r.count);
        CHECK(cnt[d + g] == 0, "%s: an unused word written", what);
        const __int128 sum = (__int128)lo[g] + (__int128)wraps * ((__int128)1 << 64);
        CHECK(sum == ((flags & kWideSum) ? r.sum : 0), "%s: sum differs", what);
        const uint64_t sb = kSigned ? 1ull << 63 : 0;
        if ((flags & kWideExtremes) && r.count > 0) {
          const uint64_t mn = ~ext[2 * g] ^ sb, mx = ext[2 * g + 1] ^ sb;
          const __int128 m0 = kSigned ? (__int128)(int64_t)mn : (__int128)mn;
          const __int128 m1 = kSigned ? (__int128)(int64_t)mx : (__int128)mx;
          CHECK(m0 == r.mn && m1 == r.mx, "%s: min/max differ", what);
        } else {
          CHECK(ext[2 * g] == 0 && ext[2 * g + 1] == 0, "%s: extremes written", what);
        }
      }
    }
  }
  printf("%-22s %s\n", name, failures == before ? "ok" : "FAILED");
}

int main() {
  run_wide<int64_t, int64_t>(arrowagg_group_wide_int64, kKind_int64, "wide int64 by int64");
  run_wide<int32_t, int32_t>(arrowagg_group_wide_int32, kKind_int32, "wide int32 by int32");
  run_wide<uint32_t, uint64_t>(arrowagg_group_wide_uint64, kKind_uint32, "wide uint64 by uint32");
  run_wide<int16_t, int8_t>(arrowagg_group_wide_int8, kKind_int16, "wide int8 by int16");
  run_wide<uint64_t, uint16_t>(arrowagg_group_wide_uint16, kKind_uint64, "wide uint16 by uint64");
  run_wide<int8_t, int64_t>(arrowagg_group_wide_int64, kKind_int8, "wide int64 by int8");
  test<int64_t, int64_t>(arrowagg_group_int64, kKind_int64, "int64 by int64");
  test<int32_t, int64_t>(arrowagg_group_int64, kKind_int32, "int64 by int32");
  test<uint8_t, int64_t>(arrowagg_group_int64, kKind_uint8, "int64 by uint8");
  test<int64_t, int32_t>(arrowagg_group_int32, kKind_int64, "int32 by int64");
  test<uint16_t, int32_t>(arrowagg_group_int32, kKind_uint16, "int32 by uint16");
  test<int8_t, int32_t>(arrowagg_group_int32, kKind_int8, "int32 by int8");
  test<uint64_t, uint64_t>(arrowagg_group_uint64, kKind_uint64, "uint64 by uint64");
  test<int16_t, int8_t>(arrowagg_group_int8, kKind_int16, "int8 by int16");
  test<uint32_t, uint16_t>(arrowagg_group_uint16, kKind_uint32, "uint16 by uint32");
  test<int64_t, double>(arrowagg_group_float64, kKind_int64, "float64 by int64");
  test<uint32_t, double>(arrowagg_group_float64, kKind_uint32, "float64 by uint32");
  test<int32_t, float>(arrowagg_group_float32, kKind_int32, "float32 by int32");
  test_threads<int64_t, double>(arrowagg_group_threads_float64, kKind_int64, "threads float64 by int64");
  test_threads<uint8_t, double>(arrowagg_group_threads_float64, kKind_uint8, "threads float64 by uint8");
  test_threads<int16_t, float>(arrowagg_group_threads_float32, kKind_int16, "threads float32 by int16");
  test_exact<int64_t, double>(arrowagg_group_exact_float64, arrowagg_float_scale_float64, kKind_int64,
                              "exact float64 by int64");
  test_exact<uint16_t, double>(arrowagg_group_exact_float64, arrowagg_float_scale_float64, kKind_uint16,
                               "exact float64 by uint16");
  test_exact<int32_t, float>(arrowagg_group_exact_float32, arrowagg_float_scale_float32, kKind_int32,
                             "exact float32 by int32");
  printf("%s: %d failures (%d launches)\n", failures ? "FAIL" : "PASS", failures, launches);
  return failures != 0;
}
