// agg_harness.cc: runs the kernels of agg.cu on the CPU (emu.h) over random
// columns of every kind, with element and validity bit offsets, null
// bitmaps, lengths around the vector width and several grid sizes, and
// checks every state word against a plain sequential computation (exact
// 128/192-bit sums; floats within a bound, NaN/Inf/-0 rules exactly). The
// ordered kernels run after the fused one on its state, over columns full of
// ties (and all-NaN, all-null, -0/+0 ones), and every word is checked
// against a sequential scan: first/last valid element, first minimum and
// maximum (earliest wins), the raw bits of the first and last values. The
// many-columns kernel runs over batches of mixed kinds, lengths, offsets and
// null densities, cut into the host's tiles or odd ones, on grids of fewer
// blocks than tiles or one per tile, and every column's state is checked
// against the per-kind kernel's on the same elements.
// The sketch kernels run beside the moments kernels: the same states, and
// the registers and distinct hashes of a sequential fold, in one launch or
// two into one device sketch.
// The moments kernels run beside the per-kind ones on the same elements:
// their first words must be the per-kind kernel's, the squares exact
// (integers) or within a bound (floats), non-finite squares kept apart.
// Build and run: kernels/emu/run.sh
#include "emu.h"
#include "../agg.cu"
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <limits>
#include <type_traits>

typedef void (*Kern)(const void*, unsigned long long, const uint32_t*, unsigned long long, unsigned long long,
                     uint64_t*, unsigned int*, uint64_t*);
static std::mt19937_64 rng(42);
static int failures = 0;
#define CHECK(c, ...) do { if (!(c)) { failures++; if (failures < 30) { printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } } while (0)

struct Case { uint64_t n, voff, vbit; bool nulls; unsigned grid; };

static std::vector<uint32_t> make_validity(const Case& c, double frac) {
  std::vector<uint32_t> v((c.vbit + c.n + 31) / 32 + 2, 0);
  std::uniform_real_distribution<double> u(0, 1);
  for (uint64_t i = 0; i < v.size() * 32; i++) if (u(rng) >= frac) v[i / 32] |= 1u << (i % 32);
  return v;
}
static bool bit(const std::vector<uint32_t>& v, uint64_t p) { return (v[p / 32] >> (p % 32)) & 1; }

static std::vector<uint64_t> run(Kern k, const void* vals, const Case& c, const uint32_t* valid, int words) {
  std::vector<uint64_t> partials(c.grid * 8, 0xdeadbeef), out(8, 0xabad1dea);
  unsigned ticket = 0;
  emu_launch(k, c.grid, (unsigned)kBlockThreads, vals, (unsigned long long)c.voff, valid, (unsigned long long)c.vbit,
             (unsigned long long)c.n, partials.data(), &ticket, out.data());
  CHECK(ticket == 0, "ticket not reset: %u", ticket);
  out.resize(words);
  return out;
}

static std::vector<Case> cases() {
  std::vector<Case> cs;
  uint64_t ns[] = {0, 1, 2, 5, 15, 16, 17, 31, 33, 64, 100, 1000, 4097, 20000};
  unsigned grids[] = {1, 2, 3, 5};
  for (uint64_t n : ns)
    for (int r = 0; r < 2; r++)
      cs.push_back(Case{n, rng() % 21, rng() % 45, (bool)(rng() % 2), grids[rng() % 4]});
  return cs;
}

template <typename T> void test_int(Kern k, const char* name) {
  for (auto c : cases()) {
    std::vector<T> buf(c.voff + c.n + 4);
    for (auto& x : buf) { uint64_t r = rng(); std::memcpy(&x, &r, sizeof(T)); }
    auto valid = make_validity(c, 0.3);
    auto got = run(k, buf.data(), c, c.nulls ? valid.data() : nullptr, 5);
    __int128 sum = 0; T mn = std::numeric_limits<T>::max(), mx = std::numeric_limits<T>::min(); uint64_t cnt = 0;
    for (uint64_t i = 0; i < c.n; i++) {
      if (c.nulls && !bit(valid, c.vbit + i)) continue;
      T x = buf[c.voff + i]; sum += x; mn = std::min(mn, x); mx = std::max(mx, x); cnt++;
    }
    bool s = std::is_signed<T>::value;
    uint64_t wmn = s ? (uint64_t)(int64_t)mn : (uint64_t)mn, wmx = s ? (uint64_t)(int64_t)mx : (uint64_t)mx;
    if (cnt == 0) { wmn = got[2]; wmx = got[3]; }  // identities differ by width; the host ignores them
    CHECK(got[0] == (uint64_t)sum && got[1] == (uint64_t)(sum >> 64) && got[2] == wmn && got[3] == wmx && got[4] == cnt,
          "%s n=%lu voff=%lu vbit=%lu nulls=%d grid=%u: got {%lx %lx %lx %lx %lu} want {%lx %lx %lx %lx %lu}", name,
          c.n, c.voff, c.vbit, c.nulls, c.grid, got[0], got[1], got[2], got[3], got[4], (uint64_t)sum,
          (uint64_t)(sum >> 64), wmn, wmx, cnt);
  }
}

static uint64_t key(double x) { int64_t b; std::memcpy(&b, &x, 8); return (uint64_t)(b ^ ((b >> 63) & INT64_MAX)); }
static double dbl(uint64_t w) { double d; std::memcpy(&d, &w, 8); return d; }

template <typename T> void test_float(Kern k, const char* name, bool specials) {
  std::normal_distribution<double> nd;
  for (auto c : cases()) {
    std::vector<T> buf(c.voff + c.n + 4);
    auto valid = make_validity(c, 0.3);
    for (uint64_t i = 0; i < buf.size(); i++) {
      double x = nd(rng) * std::pow(10.0, (int)(rng() % 9) - 4);
      int r = rng() % 50;
      if (r == 0) x = 0; else if (r == 1) x = -0.0;
      if (specials && r == 2) x = NAN; else if (specials && r == 3) x = INFINITY; else if (specials && r == 4) x = -INFINITY;
      buf[i] = (T)x;
      uint64_t e = i - c.voff;
      if (c.nulls && i >= c.voff && e < c.n && !bit(valid, c.vbit + e)) buf[i] = (T)NAN;  // garbage under nulls
    }
    auto got = run(k, buf.data(), c, c.nulls ? valid.data() : nullptr, 6);
    long double ref = 0, abs = 0; double special = 0; bool any_special = false;
    uint64_t cnt = 0; int64_t kmn = INT64_MAX, kmx = INT64_MIN; bool any = false;
    for (uint64_t i = 0; i < c.n; i++) {
      if (c.nulls && !bit(valid, c.vbit + i)) continue;
      double x = buf[c.voff + i]; cnt++;
      if (!std::isfinite(x)) { special += x; any_special = true; } else { ref += x; abs += std::fabs(x); }
      if (std::isnan(x)) continue;
      any = true; kmn = std::min(kmn, (int64_t)key(x)); kmx = std::max(kmx, (int64_t)key(x));
    }
    if (!any) { kmn = (int64_t)key(INFINITY); kmx = (int64_t)key(-INFINITY); }
    double gs = dbl(got[0]) + dbl(got[1]), gsp = dbl(got[2]);
    bool ok = got[3] == (uint64_t)kmn && got[4] == (uint64_t)kmx && got[5] == cnt;
    if (any_special) ok = ok && (std::isnan(special) ? std::isnan(gsp) : gsp == special);
    else ok = ok && gsp == 0 && std::fabs((long double)gs - ref) <= 1e-15L * abs + 1e-300L;
    CHECK(ok, "%s specials=%d n=%lu voff=%lu vbit=%lu nulls=%d grid=%u: got sum %.17g sp %g min %g max %g cnt %lu; want %.17Lg sp %g min %g max %g cnt %lu",
          name, specials, c.n, c.voff, c.vbit, c.nulls, c.grid, gs, gsp, dbl(key(dbl(got[3]))), dbl(key(dbl(got[4]))), got[5],
          ref, special, dbl(key(dbl(kmn))), dbl(key(dbl(kmx))), cnt);
  }
}

void test_decimal(Kern k) {
  for (auto c : cases()) {
    std::vector<unsigned __int128> buf(c.voff + c.n + 4);
    for (auto& x : buf) x = ((unsigned __int128)rng() << 64) | rng();
    auto valid = make_validity(c, 0.3);
    auto got = run(k, buf.data(), c, c.nulls ? valid.data() : nullptr, 8);
    unsigned __int128 lo = 0; int64_t top = 0; __int128 mn = 0, mx = 0; uint64_t cnt = 0;
    for (uint64_t i = 0; i < c.n; i++) {
      if (c.nulls && !bit(valid, c.vbit + i)) continue;
      __int128 x = (__int128)buf[c.voff + i];
      unsigned __int128 prev = lo; lo += (unsigned __int128)x;
      top += (x < 0 ? -1 : 0) + (lo < prev ? 1 : 0);
      if (cnt == 0 || x < mn) mn = x;
      if (cnt == 0 || x > mx) mx = x;
      cnt++;
    }
    bool ok = got[0] == (uint64_t)lo && got[1] == (uint64_t)(lo >> 64) && got[2] == (uint64_t)top && got[7] == cnt;
    if (cnt > 0) ok = ok && got[3] == (uint64_t)mn && got[4] == (uint64_t)((unsigned __int128)mn >> 64) &&
                     got[5] == (uint64_t)mx && got[6] == (uint64_t)((unsigned __int128)mx >> 64);
    CHECK(ok, "decimal n=%lu voff=%lu vbit=%lu nulls=%d grid=%u cnt %lu/%lu", c.n, c.voff, c.vbit, c.nulls, c.grid, got[7], cnt);
  }
}

void test_bool(Kern k) {
  for (auto c : cases()) {
    std::vector<uint32_t> vals((c.voff + c.n + 31) / 32 + 2);
    for (auto& w : vals) w = (uint32_t)rng();
    auto valid = make_validity(c, 0.3);
    auto got = run(k, vals.data(), c, c.nulls ? valid.data() : nullptr, 2);
    uint64_t t = 0, cnt = 0;
    for (uint64_t i = 0; i < c.n; i++) {
      if (c.nulls && !bit(valid, c.vbit + i)) continue;
      cnt++; t += bit(vals, c.voff + i);
    }
    CHECK(got[0] == t && got[1] == cnt, "bool n=%lu voff=%lu vbit=%lu nulls=%d grid=%u got %lu/%lu want %lu/%lu", c.n,
          c.voff, c.vbit, c.nulls, c.grid, got[0], got[1], t, cnt);
  }
}

// ------------------------------------------------------------ ordered

typedef void (*OKern)(const void*, unsigned long long, const uint32_t*, unsigned long long, unsigned long long,
                      const uint64_t*, uint64_t*, unsigned int*, uint64_t*);

// run_ordered launches the fused kernel, then the ordered one on its state,
// as the backend does on one stream, and returns the ordered words.
static std::vector<uint64_t> run_ordered(Kern k, OKern ok, const void* vals, const Case& c, const uint32_t* valid) {
  std::vector<uint64_t> partials(c.grid * 8, 0xdeadbeef), state(8, 0xabad1dea), out(8, 0x5ca1ab1e);
  unsigned ticket = 0;
  const auto n = (unsigned long long)c.n, voff = (unsigned long long)c.voff, vbit = (unsigned long long)c.vbit;
  emu_launch(k, c.grid, (unsigned)kBlockThreads, vals, voff, valid, vbit, n, partials.data(), &ticket, state.data());
  // Another grid for the second launch: the two are independent.
  const unsigned g2 = c.grid % 5 + 1;
  partials.assign(g2 * 8, 0xdeadbeef);
  emu_launch(ok, g2, (unsigned)kBlockThreads, vals, voff, valid, vbit, n, (const uint64_t*)state.data(),
             partials.data(), &ticket, out.data());
  CHECK(ticket == 0, "ticket not reset after the ordered kernel: %u", ticket);
  return out;
}

// Ref is the sequential answer: element indices (-1: none) and raw values.
struct Ref {
  int64_t first = -1, last = -1, mn = -1, mx = -1;
  uint64_t flo = 0, fhi = 0, llo = 0, lhi = 0;
};

static void check_ordered(const char* name, const Case& c, const char* mode, const std::vector<uint64_t>& got,
                          const Ref& want) {
  CHECK((int64_t)got[0] == want.first && (int64_t)got[1] == want.last && (int64_t)got[2] == want.mn &&
            (int64_t)got[3] == want.mx && got[4] == want.flo && got[5] == want.fhi && got[6] == want.llo &&
            got[7] == want.lhi,
        "ordered %s %s n=%lu voff=%lu vbit=%lu nulls=%d grid=%u: got rows {%ld %ld %ld %ld} values {%lx:%lx %lx:%lx}; "
        "want {%ld %ld %ld %ld} {%lx:%lx %lx:%lx}",
        name, mode, c.n, c.voff, c.vbit, c.nulls, c.grid, (int64_t)got[0], (int64_t)got[1], (int64_t)got[2],
        (int64_t)got[3], got[5], got[4], got[7], got[6], want.first, want.last, want.mn, want.mx, want.fhi, want.flo,
        want.lhi, want.llo);
}

// Order is the State's order of a storage type: ok is false for NaN (skipped
// by min/max), key orders the rest (-0 < +0), raw is the zero-extended bits.
template <typename T> struct Order {
  static bool ok(T x) { return x == x; }
  static __int128 key(T x) {
    if constexpr (std::is_floating_point_v<T>) return (int64_t)::key((double)x);
    else return (__int128)x;
  }
  static void raw(T x, uint64_t& lo, uint64_t& hi) { lo = 0; hi = 0; std::memcpy(&lo, &x, sizeof(T)); }
};
template <> struct Order<unsigned __int128> {  // decimal128, compared signed
  static bool ok(unsigned __int128) { return true; }
  static __int128 key(unsigned __int128 x) { return (__int128)x; }
  static void raw(unsigned __int128 x, uint64_t& lo, uint64_t& hi) { lo = (uint64_t)x; hi = (uint64_t)(x >> 64); }
};

template <typename T> Ref ordered_ref(const std::vector<T>& buf, const Case& c, const std::vector<uint32_t>& valid) {
  using O = Order<T>;
  Ref r;
  bool any = false;
  __int128 mn = 0, mx = 0;
  for (uint64_t i = 0; i < c.n; i++) {
    if (c.nulls && !bit(valid, c.vbit + i)) continue;
    const T x = buf[c.voff + i];
    if (r.first < 0) { r.first = (int64_t)i; O::raw(x, r.flo, r.fhi); }
    r.last = (int64_t)i; O::raw(x, r.llo, r.lhi);
    if (!O::ok(x)) continue;
    const __int128 k = O::key(x);
    if (!any || k < mn) mn = k, r.mn = (int64_t)i;  // strict: the earliest wins ties
    if (!any || k > mx) mx = k, r.mx = (int64_t)i;
    any = true;
  }
  if (!any && r.first >= 0) r.mn = r.mx = r.first;  // every valid value NaN: the first NaN
  return r;
}

// Value generators by mode: "ties" draws from a few values (extremes of the
// type among them) so minimum and maximum repeat far apart; "random" the
// whole range; floats add "specials" (NaN, ±Inf, ±0) and "allnan".
template <typename T> T gen_value(const char* mode) {
  if constexpr (std::is_floating_point_v<T>) {
    const int r = rng() % 16;
    if (!strcmp(mode, "allnan")) return (T)(r < 8 ? NAN : -NAN);
    if (!strcmp(mode, "specials") && r < 6) {
      const T sp[] = {(T)NAN, (T)INFINITY, (T)-INFINITY, (T)0.0, (T)-0.0, (T)-NAN};
      return sp[r];
    }
    if (!strcmp(mode, "ties")) {
      const T few[] = {(T)-0.0, (T)0.0, (T)1.5, (T)-2.25, (T)1e30, (T)-1e30};
      return few[rng() % 6];
    }
    return (T)(std::normal_distribution<double>()(rng) * 1e3);
  } else if constexpr (std::is_same_v<T, unsigned __int128>) {
    if (!strcmp(mode, "ties")) return (unsigned __int128)(__int128)((int)(rng() % 5) - 2) << (rng() % 2 ? 64 : 0);
    return ((unsigned __int128)rng() << 64) | rng();
  } else {
    if (!strcmp(mode, "ties")) {
      const T few[] = {std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), T(0), T(1), T(7)};
      return few[rng() % 5];
    }
    T x;
    const uint64_t r = rng();
    std::memcpy(&x, &r, sizeof(T));
    return x;
  }
}

template <typename T> void test_ordered(Kern k, OKern ok, const char* name, std::vector<const char*> modes) {
  for (size_t mi = 0; mi < modes.size(); mi++) {
    const char* mode = modes[mi];
    auto cs = cases();
    for (size_t ci = 0; ci < cs.size(); ci++) {
      if (mi > 1 && ci % 2 == 1) continue;  // the later modes on half the cases (emulation is slow)
      const Case& c = cs[ci];
      std::vector<T> buf(c.voff + c.n + 4);
      for (auto& x : buf) x = gen_value<T>(mode);
      const bool allnull = rng() % 8 == 0;
      auto valid = make_validity(c, allnull ? 1.0 : 0.3);
      auto got = run_ordered(k, ok, buf.data(), c, c.nulls ? valid.data() : nullptr);
      check_ordered(name, c, allnull && c.nulls ? "allnull" : mode, got, ordered_ref(buf, c, valid));
    }
  }
}

void test_ordered_bool(Kern k, OKern ok) {
  for (int mode = 0; mode < 3; mode++)  // random, all true, all false
    for (auto c : cases()) {
      std::vector<uint32_t> vals((c.voff + c.n + 31) / 32 + 2);
      for (auto& w : vals) w = mode == 0 ? (uint32_t)rng() : mode == 1 ? kFullMask : 0u;
      auto valid = make_validity(c, 0.3);
      auto got = run_ordered(k, ok, vals.data(), c, c.nulls ? valid.data() : nullptr);
      Ref r;
      uint64_t trues = 0, cnt = 0;
      for (uint64_t i = 0; i < c.n; i++)
        if (!c.nulls || bit(valid, c.vbit + i)) cnt++, trues += bit(vals, c.voff + i);
      const uint64_t want_min = trues == cnt, want_max = trues > 0;
      for (uint64_t i = 0; i < c.n; i++) {
        if (c.nulls && !bit(valid, c.vbit + i)) continue;
        const uint64_t b = bit(vals, c.voff + i);
        if (r.first < 0) r.first = (int64_t)i, r.flo = b;
        r.last = (int64_t)i, r.llo = b;
        if (r.mn < 0 && b == want_min) r.mn = (int64_t)i;
        if (r.mx < 0 && b == want_max) r.mx = (int64_t)i;
      }
      const char* modes[] = {"random", "alltrue", "allfalse"};
      check_ordered("bool", c, modes[mode], got, r);
    }
}

void test_ordered_all() {
  const std::vector<const char*> ints = {"ties", "random"}, floats = {"ties", "random", "specials", "allnan"};
  test_ordered<int8_t>(arrowagg_int8, arrowagg_ordered_int8, "int8", ints);
  test_ordered<int16_t>(arrowagg_int16, arrowagg_ordered_int16, "int16", ints);
  test_ordered<int32_t>(arrowagg_int32, arrowagg_ordered_int32, "int32", ints);
  test_ordered<int64_t>(arrowagg_int64, arrowagg_ordered_int64, "int64", ints);
  test_ordered<uint8_t>(arrowagg_uint8, arrowagg_ordered_uint8, "uint8", ints);
  test_ordered<uint16_t>(arrowagg_uint16, arrowagg_ordered_uint16, "uint16", ints);
  test_ordered<uint32_t>(arrowagg_uint32, arrowagg_ordered_uint32, "uint32", ints);
  test_ordered<uint64_t>(arrowagg_uint64, arrowagg_ordered_uint64, "uint64", ints);
  test_ordered<float>(arrowagg_float32, arrowagg_ordered_float32, "float32", floats);
  test_ordered<double>(arrowagg_float64, arrowagg_ordered_float64, "float64", floats);
  test_ordered<unsigned __int128>(arrowagg_decimal128, arrowagg_ordered_decimal128, "decimal128", ints);
  test_ordered_bool(arrowagg_bool, arrowagg_ordered_bool);
}

// ------------------------------------------------------------ many columns

// KindInfo is what the harness needs of each KindCode: the per-kind kernel
// that the many-columns kernel is checked against, the element width, the
// words of the state.
struct KindInfo {
  const char* name;
  Kern k;
  int bits;  // per element; 1 for bool
  int words;
  bool fl;
};
#define HARNESS_KIND(name, ...) {#name, arrowagg_##name, 0, (__VA_ARGS__::Family::K), false},
constexpr int kNumKinds = kKinds;
static KindInfo kind_info[kNumKinds] = {ARROWAGG_KINDS(HARNESS_KIND)};
static void init_kind_info() {
  const int bits[kNumKinds] = {8, 16, 32, 64, 8, 16, 32, 64, 32, 64, 128, 1};
  for (int k = 0; k < kNumKinds; k++) kind_info[k].bits = bits[k];
  kind_info[kKind_float32].fl = kind_info[kKind_float64].fl = true;
}

// host_tile is the tile size gpuagg/cuda uses: 4 strided iterations of one
// block (multiTileIters × kernelSpec.elemsPerBlockIter).
static uint64_t host_tile(int kind) {
  const int b = kind_info[kind].bits;
  return 4 * (b == 1 ? (uint64_t)kBlockThreads * 32 : (uint64_t)kBlockThreads * kUnroll * (128 / b));
}

// MultiCol is one column of a many-columns launch: random values (floats
// with NaN, ±Inf and ±0 now and then, NaN under nulls), a validity bitmap of
// a given null fraction (or none), element and bit offsets.
struct MultiCol {
  int kind;
  Case c;
  double null_frac;
  std::vector<uint4> vals;  // 16-byte aligned storage
  std::vector<uint32_t> valid;
  uint64_t tile;  // elements per tile
};

static MultiCol make_multi_col(int kind, uint64_t n, double null_frac, bool odd_tiles) {
  MultiCol m;
  m.kind = kind;
  const KindInfo& ki = kind_info[kind];
  m.c = Case{n, kind == kKind_decimal128 ? rng() % 5 : rng() % 21, rng() % 45, null_frac >= 0, 1};
  m.null_frac = null_frac;
  const uint64_t bits = (m.c.voff + n) * ki.bits;
  m.vals.resize(bits / 128 + 3);
  for (auto& v : m.vals) v = uint4{(unsigned)rng(), (unsigned)rng(), (unsigned)rng(), (unsigned)rng()};
  if (m.c.nulls) m.valid = make_validity(m.c, null_frac);
  if (ki.fl) {
    std::normal_distribution<double> nd;
    for (uint64_t i = m.c.voff; i < m.c.voff + n; i++) {
      double x = nd(rng) * std::pow(10.0, (int)(rng() % 9) - 4);
      const int r = rng() % 100;
      if (r == 0) x = NAN; else if (r == 1) x = INFINITY; else if (r == 2) x = -INFINITY;
      else if (r == 3) x = 0.0; else if (r == 4) x = -0.0;
      if (m.c.nulls && !bit(m.valid, m.c.vbit + i - m.c.voff)) x = NAN;  // garbage under nulls
      if (kind == kKind_float32) reinterpret_cast<float*>(m.vals.data())[i] = (float)x;
      else reinterpret_cast<double*>(m.vals.data())[i] = x;
    }
  }
  m.tile = odd_tiles ? 1 + rng() % 3000 : host_tile(kind);
  return m;
}

// abs_sum is the sum of |x| over the valid finite values of a float column.
static double abs_sum(const MultiCol& m) {
  double a = 0;
  for (uint64_t i = 0; i < m.c.n; i++) {
    if (m.c.nulls && !bit(m.valid, m.c.vbit + i)) continue;
    const uint64_t e = m.c.voff + i;
    const double x = m.kind == kKind_float32 ? (double)reinterpret_cast<const float*>(m.vals.data())[e]
                                             : reinterpret_cast<const double*>(m.vals.data())[e];
    if (std::isfinite(x)) a += std::fabs(x);
  }
  return a;
}

// run_multi launches arrowagg_multi over cols on a grid of `grid` blocks
// (0: one per tile), like gpuagg/cuda does, and checks every column's state
// against the per-kind kernel's on the same elements: every word equal when
// the column is one tile (the per-kind kernel on one block then computes the
// same thing), else equal but for floats the sum and compensation, whose
// total must agree within the compensated sums' bound, and a NaN special
// sum, whose sign may differ.
static void run_multi(const char* what, std::vector<MultiCol>& cols, unsigned grid) {
  std::vector<ColumnDesc> descs(cols.size());
  std::vector<Tile> tiles;
  std::vector<uint64_t> out(cols.size() * kMaxWords, 0xabad1dea);
  for (size_t ci = 0; ci < cols.size(); ci++) {
    const MultiCol& m = cols[ci];
    ColumnDesc& d = descs[ci];
    d.values = (uint64_t)(uintptr_t)m.vals.data();
    d.voff = m.c.voff;
    d.validity = m.c.nulls ? (uint64_t)(uintptr_t)m.valid.data() : 0;
    d.vbit = m.c.vbit;
    d.out = (uint64_t)(uintptr_t)&out[ci * kMaxWords];
    d.kind = (uint32_t)m.kind;
    d.first_tile = (uint32_t)tiles.size();
    uint64_t lo = 0;
    do {  // a column of no elements is one empty tile
      const uint64_t n = std::min(m.tile, m.c.n - lo);
      tiles.push_back(Tile{lo, (uint32_t)n, (uint32_t)ci});
      lo += n;
    } while (lo < m.c.n);
    d.tiles = (uint32_t)tiles.size() - d.first_tile;
    d.reserved = 0;
  }
  std::vector<uint64_t> partials(tiles.size() * kMaxWords, 0xdeadbeef);
  std::vector<unsigned> tickets(cols.size(), 0);
  const unsigned g = grid == 0 ? (unsigned)tiles.size() : grid;
  emu_launch(arrowagg_multi, g, (unsigned)kBlockThreads, (const ColumnDesc*)descs.data(), (const Tile*)tiles.data(),
             (unsigned long long)tiles.size(), partials.data(), tickets.data());
  for (size_t ci = 0; ci < cols.size(); ci++) {
    const MultiCol& m = cols[ci];
    const KindInfo& ki = kind_info[m.kind];
    CHECK(tickets[ci] == 0, "multi %s: ticket of column %zu not reset: %u", what, ci, tickets[ci]);
    Case c = m.c;
    const bool one_tile = descs[ci].tiles == 1;
    c.grid = one_tile ? 1 : 1 + rng() % 4;
    const auto want = run(ki.k, m.vals.data(), c, c.nulls ? m.valid.data() : nullptr, ki.words);
    const uint64_t* got = &out[ci * kMaxWords];
    bool ok = true;
    for (int w = 0; w < ki.words; w++) {
      if (ki.fl && !one_tile && w < 3) continue;
      ok = ok && got[w] == want[w];
    }
    if (ki.fl && !one_tile) {
      const double gs = dbl(got[0]) + dbl(got[1]), ws = dbl(want[0]) + dbl(want[1]);
      ok = ok && std::fabs(gs - ws) <= 2e-15 * abs_sum(m) + 1e-300;
      // The special sums: the same value, or both NaN (the sign of a NaN
      // made by Inf + -Inf depends on the order of the additions).
      const double gsp = dbl(got[2]), wsp = dbl(want[2]);
      ok = ok && (std::isnan(wsp) ? std::isnan(gsp) : got[2] == want[2]);
    }
    CHECK(ok, "multi %s: column %zu (%s n=%lu voff=%lu vbit=%lu nulls=%g tiles=%u of %lu, grid %u): "
              "got {%lx %lx %lx ...} want {%lx %lx %lx ...}",
          what, ci, ki.name, c.n, c.voff, c.vbit, m.c.nulls ? m.null_frac : -1.0, descs[ci].tiles, m.tile, g,
          got[0], got[1], got[2], want[0], want[1], want[2]);
  }
}

void test_multi() {
  init_kind_info();
  const uint64_t lens[] = {0, 1, 2, 17, 33, 100, 1000, 4097};
  const double nulls[] = {-1, 0.01, 0.5, 1};  // -1: no bitmap
  auto pick_len = [&] { return lens[rng() % (sizeof lens / sizeof lens[0])]; };
  auto pick_nulls = [&] { return nulls[rng() % 4]; };
  // Each kind alone, at each length, on its own and with a neighbour.
  for (int k = 0; k < kNumKinds; k++) {
    for (uint64_t n : {0, 1, 33, 4097}) {
      std::vector<MultiCol> cols;
      cols.push_back(make_multi_col(k, n, pick_nulls(), false));
      run_multi("one column", cols, 0);
      cols.push_back(make_multi_col((int)(rng() % kNumKinds), pick_len(), pick_nulls(), false));
      run_multi("two columns", cols, 1 + rng() % 2);
    }
  }
  // Mixed batches: 37 columns on a grid of fewer blocks than tiles (blocks
  // walk tiles of several kinds), 300 short ones on 7 blocks.
  for (unsigned grid : {0u, 1u, 5u}) {
    std::vector<MultiCol> cols;
    for (int i = 0; i < 37; i++) cols.push_back(make_multi_col((int)(rng() % kNumKinds), pick_len(), pick_nulls(), false));
    run_multi("37 columns", cols, grid);
  }
  {
    std::vector<MultiCol> cols;
    for (int i = 0; i < 300; i++) cols.push_back(make_multi_col(i % kNumKinds, rng() % 65, pick_nulls(), false));
    run_multi("300 columns", cols, 7);
  }
  // Columns of many tiles among short ones: the host's tiles (a large int8
  // column), odd tile sizes (tiles that start anywhere in a vector or a
  // bitmap word), and blocks that finish a column's tiles in any order.
  for (unsigned grid : {0u, 3u}) {
    std::vector<MultiCol> cols;
    cols.push_back(make_multi_col(kKind_int8, 150001, 0.3, false));
    for (int k = 0; k < kNumKinds; k++) {
      cols.push_back(make_multi_col(k, 6000 + rng() % 6000, pick_nulls(), true));
      cols.push_back(make_multi_col((int)(rng() % kNumKinds), pick_len(), pick_nulls(), false));
    }
    run_multi("many tiles", cols, grid);
  }
}

// ------------------------------------------------------------ moments

static std::vector<uint64_t> run_words(Kern k, const void* vals, const Case& c, const uint32_t* valid, int words) {
  std::vector<uint64_t> partials(c.grid * AGG_STATE_WORDS, 0xdeadbeef), out(AGG_STATE_WORDS, 0xabad1dea);
  unsigned ticket = 0;
  emu_launch(k, c.grid, (unsigned)kBlockThreads, vals, (unsigned long long)c.voff, valid, (unsigned long long)c.vbit,
             (unsigned long long)c.n, partials.data(), &ticket, out.data());
  CHECK(ticket == 0, "ticket not reset: %u", ticket);
  out.resize(words);
  return out;
}

// test_int_moments runs the integer moments kernel beside the plain one on
// the same elements: the first five words are the plain kernel's, the last
// three the exact sum of the squares.
template <typename T> void test_int_moments(Kern plain, Kern k, const char* name) {
  for (auto c : cases()) {
    std::vector<T> buf(c.voff + c.n + 4);
    for (auto& x : buf) {
      uint64_t r = rng();
      if (rng() % 4 == 0) r = rng() % 2 ? ~(uint64_t)0 >> 1 : (uint64_t)1 << 63;  // extremes of every width
      std::memcpy(&x, &r, sizeof(T));
      if (rng() % 4 == 0) x = std::is_signed<T>::value ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
    }
    auto valid = make_validity(c, 0.3);
    const uint32_t* vp = c.nulls ? valid.data() : nullptr;
    auto base = run(plain, buf.data(), c, vp, 5);
    auto got = run_words(k, buf.data(), c, vp, AGG_INTEGER_MOMENT_WORDS);
    unsigned __int128 lo = 0;
    uint64_t top = 0;
    for (uint64_t i = 0; i < c.n; i++) {
      if (c.nulls && !bit(valid, c.vbit + i)) continue;
      const T x = buf[c.voff + i];
      const unsigned __int128 m = x < T(0) ? (unsigned __int128)(-(__int128)x) : (unsigned __int128)x;
      const unsigned __int128 sq = m * m, prev = lo;
      lo += sq;
      top += lo < prev;
    }
    bool ok = got[5] == (uint64_t)lo && got[6] == (uint64_t)(lo >> 64) && got[7] == top;
    for (int i = 0; i < 5; i++) ok = ok && got[i] == base[i];
    CHECK(ok, "moments %s n=%lu voff=%lu vbit=%lu nulls=%d grid=%u: squares {%lx %lx %lx} want {%lx %lx %lx}", name,
          c.n, c.voff, c.vbit, c.nulls, c.grid, got[5], got[6], got[7], (uint64_t)lo, (uint64_t)(lo >> 64), top);
  }
}

// test_float_moments: the first six words are the plain kernel's (the sum
// by the same shapes), the squares within 1e-15 relative of a long double
// sum, non-finite squares in special.
template <typename T> void test_float_moments(Kern plain, Kern k, const char* name, bool specials) {
  std::normal_distribution<double> nd;
  for (auto c : cases()) {
    std::vector<T> buf(c.voff + c.n + 4);
    auto valid = make_validity(c, 0.3);
    for (uint64_t i = 0; i < buf.size(); i++) {
      double x = 1e3 + nd(rng) * std::pow(10.0, (int)(rng() % 9) - 4);
      int r = rng() % 50;
      if (r == 0) x = 0; else if (r == 1) x = -0.0;
      if (specials && r == 2) x = NAN; else if (specials && r == 3) x = INFINITY;
      else if (specials && r == 4) x = sizeof(T) == 8 ? 1e200 : 3e38;  // a square past float64 (float32: not)
      buf[i] = (T)x;
      uint64_t e = i - c.voff;
      if (c.nulls && i >= c.voff && e < c.n && !bit(valid, c.vbit + e)) buf[i] = (T)NAN;  // garbage under nulls
    }
    const uint32_t* vp = c.nulls ? valid.data() : nullptr;
    auto base = run(plain, buf.data(), c, vp, 6);
    auto got = run_words(k, buf.data(), c, vp, AGG_FLOAT_MOMENT_WORDS);
    long double ref = 0;
    double special = 0;
    bool any_special = false;
    for (uint64_t i = 0; i < c.n; i++) {
      if (c.nulls && !bit(valid, c.vbit + i)) continue;
      const double x = buf[c.voff + i], p = x * x;
      if (!std::isfinite(p)) { special += p; any_special = true; } else { ref += (long double)x * x; }
    }
    bool ok = true;
    for (int i = 0; i < 6; i++) ok = ok && (got[i] == base[i] || (std::isnan(dbl(got[i])) && std::isnan(dbl(base[i]))));
    const double gq = dbl(got[6]) + dbl(got[7]), gsp = dbl(got[8]);
    if (any_special) ok = ok && (std::isnan(special) ? std::isnan(gsp) : gsp == special);
    else ok = ok && gsp == 0 && std::fabs((long double)gq - ref) <= 1e-15L * ref + 1e-300L;
    CHECK(ok, "moments %s specials=%d n=%lu voff=%lu vbit=%lu nulls=%d grid=%u: squares %.17g sp %g; want %.17Lg sp %g",
          name, specials, c.n, c.voff, c.vbit, c.nulls, c.grid, gq, gsp, ref, special);
  }
}

// ------------------------------------------------------------- sketch

typedef void (*SKern)(const void*, unsigned long long, const uint32_t*, unsigned long long, unsigned long long,
                      uint64_t*, unsigned int*, uint64_t*, DeviceSketch*);

// ref_hash is agg.HashInt / agg.HashFloat, written again from their
// definition (three Feistel rounds on the 32-bit halves, the hash lo:hi).
static uint32_t ref_round(uint32_t a, uint32_t k, uint64_t d) {
  const uint64_t p = (uint64_t)a * k + d;
  return (uint32_t)p ^ (uint32_t)(p >> 32);
}
static uint64_t ref_mix(uint64_t x) {
  uint32_t hi = (uint32_t)(x >> 32), lo = (uint32_t)x;
  lo ^= ref_round(hi, 0x9e3779b9u, 0);
  hi ^= ref_round(lo, 0x85ebca6bu, 0x27d4eb2f165667b1ULL);
  lo ^= ref_round(hi, 0xc2b2ae35u, 0x94d049bb133111ebULL);
  return (uint64_t)lo << 32 | hi;
}
template <typename T> static uint64_t ref_hash(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    double d = (double)x;
    uint64_t b;
    std::memcpy(&b, &d, 8);
    if (d == 0) b = 0;
    if (d != d) b = 0x7ff8000000000000ULL;
    return ref_mix(b);
  } else if constexpr (std::is_signed_v<T>) {
    return ref_mix((uint64_t)(int64_t)x);
  } else {
    return ref_mix((uint64_t)x);
  }
}

// test_sketch runs a sketch kernel beside the moments kernel over columns
// of few and of many distinct values (with nulls, offsets, several grids),
// in one launch or two launches into the same device sketch, and checks
// that the state is the moments kernel's and that the registers and the
// exact hashes (or their overflow) are a sequential fold's; then once more
// into a warm sketch (overflowed, every register at least a floor of 1 to
// 6), where most hashes are below the blocks' floor: the registers must be
// the larger of the warm ones and the fold's.
template <typename T> void test_sketch(Kern moments, SKern k, const char* name) {
  const int words = std::is_floating_point_v<T> ? AGG_FLOAT_MOMENT_WORDS : AGG_INTEGER_MOMENT_WORDS;
  // {n, pool}: pool 0 is any value; 1024 and 1025 distinct values are
  // the two sides of the exact hashes' limit.
  const uint64_t cs[][2] = {{0, 0}, {17, 1}, {4097, 300}, {4097, 1025}, {20000, 1024}, {20000, 0}};
  for (const auto& nc : cs) {
    const uint64_t n = nc[0], pool = nc[1];
    Case c{n, rng() % 21, rng() % 45, (bool)(rng() % 2), (unsigned[]){1, 2, 3, 5}[rng() % 4]};
    std::vector<T> buf(c.voff + c.n + 8);
    std::vector<uint64_t> poolv(pool ? pool : 1);
    for (auto& v : poolv) v = rng();
    for (auto& x : buf) {
      const uint64_t r = pool ? poolv[rng() % pool] : rng();
      if constexpr (std::is_floating_point_v<T>) {
        const int sp = (int)(r % 64);
        x = sp == 0 ? (T)0.0 : sp == 1 ? (T)-0.0 : sp == 2 ? (T)NAN : (T)((double)(int64_t)(r >> 11) * 1e-3);
      } else {
        x = (T)r;
      }
    }
    auto valid = make_validity(c, 0.2);
    const uint32_t* vp = c.nulls ? valid.data() : nullptr;
    // the sequential fold
    uint8_t regs[kSketchRegs] = {};
    std::vector<uint64_t> distinct;
    for (uint64_t i = 0; i < c.n; i++) {
      if (c.nulls && !bit(valid, c.vbit + i)) continue;
      const uint64_t h = ref_hash(buf[c.voff + i]);
      const unsigned r = (unsigned)(h >> (64 - kSketchP));
      const unsigned rank = (unsigned)__builtin_clzll(h << kSketchP | 1ULL << (kSketchP - 1)) + 1;
      if (rank > regs[r]) regs[r] = (uint8_t)rank;
      distinct.push_back(h);
    }
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    for (int launches = 1; launches <= 2; launches++) {
      auto sk = std::make_unique<DeviceSketch>();
      std::memset(sk.get(), 0, sizeof(DeviceSketch));
      std::vector<uint64_t> got;
      const uint64_t cut = launches == 1 ? c.n : c.n / 3;
      for (int l = 0; l < launches; l++) {
        const uint64_t lo = l == 0 ? 0 : cut, hi = l == launches - 1 ? c.n : cut;
        std::vector<uint64_t> partials(c.grid * AGG_STATE_WORDS, 0xdeadbeef), out(AGG_STATE_WORDS, 0xabad1dea);
        unsigned ticket = 0;
        emu_launch(k, c.grid, (unsigned)kBlockThreads, (const void*)(buf.data() + lo), (unsigned long long)c.voff,
                   vp, (unsigned long long)(c.vbit + lo), (unsigned long long)(hi - lo), partials.data(), &ticket,
                   out.data(), sk.get());
        CHECK(ticket == 0, "sketch %s: ticket not reset", name);
        if (launches == 1) got.assign(out.begin(), out.begin() + words);
      }
      if (launches == 1) {
        auto want = run_words(moments, buf.data(), c, vp, words);
        bool same = true;
        for (int i = 0; i < words; i++)
          same = same && (got[i] == want[i] || (std::isnan(dbl(got[i])) && std::isnan(dbl(want[i]))));
        CHECK(same, "sketch %s n=%lu pool=%lu: state differs from the moments kernel's", name, c.n, pool);
      }
      int bad = 0;
      for (int r = 0; r < kSketchRegs; r++) bad += ((sk->regs[r >> 2] >> (8 * (r & 3))) & 0xffu) != regs[r];
      CHECK(bad == 0, "sketch %s n=%lu pool=%lu nulls=%d grid=%u launches=%d: %d registers differ", name, c.n, pool,
            c.nulls, c.grid, launches, bad);
      const bool over = distinct.size() > kSketchExact;
      CHECK(sk->overflow == (unsigned)over, "sketch %s n=%lu pool=%lu launches=%d: overflow %u, %zu distinct", name,
            c.n, pool, launches, sk->overflow, distinct.size());
      if (!over) {
        std::vector<uint64_t> kept;
        for (int i = 0; i < kSketchSlots; i++)
          if (sk->slots[i] != 0) kept.push_back(sk->slots[i]);
        if (sk->zero) kept.push_back(0);
        std::sort(kept.begin(), kept.end());
        CHECK(kept == distinct && sk->count == distinct.size(),
              "sketch %s n=%lu pool=%lu launches=%d: %zu hashes kept (count %u), %zu distinct", name, c.n, pool,
              launches, kept.size(), sk->count, distinct.size());
      }
    }
    // A warm device sketch: overflowed, its registers from floor to floor+3.
    const unsigned floor = 1 + (unsigned)(rng() % 6);
    auto sk = std::make_unique<DeviceSketch>();
    std::memset(sk.get(), 0, sizeof(DeviceSketch));
    sk->overflow = 1;
    uint8_t warm[kSketchRegs];
    for (int r = 0; r < kSketchRegs; r++) {
      warm[r] = (uint8_t)(floor + rng() % 4);
      sk->regs[r >> 2] |= (unsigned)warm[r] << (8 * (r & 3));
    }
    std::vector<uint64_t> partials(c.grid * AGG_STATE_WORDS, 0xdeadbeef), out(AGG_STATE_WORDS, 0xabad1dea);
    unsigned ticket = 0;
    emu_launch(k, c.grid, (unsigned)kBlockThreads, (const void*)buf.data(), (unsigned long long)c.voff, vp,
               (unsigned long long)c.vbit, (unsigned long long)c.n, partials.data(), &ticket, out.data(), sk.get());
    int bad = 0;
    for (int r = 0; r < kSketchRegs; r++)
      bad += ((sk->regs[r >> 2] >> (8 * (r & 3))) & 0xffu) != std::max(warm[r], regs[r]);
    CHECK(bad == 0 && sk->overflow == 1, "sketch %s n=%lu pool=%lu floor=%u warm: %d registers differ, overflow %u",
          name, c.n, pool, floor, bad, sk->overflow);
  }
}

// test_sketch_all: the sketch kernels of one narrow and the widest kinds
// of each family (the others are the same templates at other widths; the
// cuda suite's TestSketchMatchesCPU runs every kind on a GPU).
static void test_sketch_all() {
  test_sketch<int8_t>(arrowagg_moments_int8, arrowagg_sketch_int8, "int8");
  test_sketch<int32_t>(arrowagg_moments_int32, arrowagg_sketch_int32, "int32");
  test_sketch<int64_t>(arrowagg_moments_int64, arrowagg_sketch_int64, "int64");
  test_sketch<uint16_t>(arrowagg_moments_uint16, arrowagg_sketch_uint16, "uint16");
  test_sketch<uint64_t>(arrowagg_moments_uint64, arrowagg_sketch_uint64, "uint64");
  test_sketch<float>(arrowagg_moments_float32, arrowagg_sketch_float32, "float32");
  test_sketch<double>(arrowagg_moments_float64, arrowagg_sketch_float64, "float64");
}

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "sketch") {  // the sketch kernels alone
    test_sketch_all();
    printf("%s: %d failures\n", failures ? "FAIL" : "PASS", failures);
    return failures != 0;
  }
  test_int<int8_t>(arrowagg_int8, "int8");
  test_int<int16_t>(arrowagg_int16, "int16");
  test_int<int32_t>(arrowagg_int32, "int32");
  test_int<int64_t>(arrowagg_int64, "int64");
  test_int<uint8_t>(arrowagg_uint8, "uint8");
  test_int<uint16_t>(arrowagg_uint16, "uint16");
  test_int<uint32_t>(arrowagg_uint32, "uint32");
  test_int<uint64_t>(arrowagg_uint64, "uint64");
  for (bool sp : {false, true}) {
    test_float<float>(arrowagg_float32, "float32", sp);
    test_float<double>(arrowagg_float64, "float64", sp);
  }
  test_decimal(arrowagg_decimal128);
  test_bool(arrowagg_bool);
  test_int_moments<int8_t>(arrowagg_int8, arrowagg_moments_int8, "int8");
  test_int_moments<int16_t>(arrowagg_int16, arrowagg_moments_int16, "int16");
  test_int_moments<int32_t>(arrowagg_int32, arrowagg_moments_int32, "int32");
  test_int_moments<int64_t>(arrowagg_int64, arrowagg_moments_int64, "int64");
  test_int_moments<uint8_t>(arrowagg_uint8, arrowagg_moments_uint8, "uint8");
  test_int_moments<uint16_t>(arrowagg_uint16, arrowagg_moments_uint16, "uint16");
  test_int_moments<uint32_t>(arrowagg_uint32, arrowagg_moments_uint32, "uint32");
  test_int_moments<uint64_t>(arrowagg_uint64, arrowagg_moments_uint64, "uint64");
  for (bool sp : {false, true}) {
    test_float_moments<float>(arrowagg_float32, arrowagg_moments_float32, "float32", sp);
    test_float_moments<double>(arrowagg_float64, arrowagg_moments_float64, "float64", sp);
  }
  test_sketch_all();
  test_ordered_all();
  test_multi();
  printf("%s: %d failures\n", failures ? "FAIL" : "PASS", failures);
  return failures != 0;
}
