// agg_harness.cc: runs the kernels of agg.cu on the CPU (emu.h) over random
// columns of every kind, with element and validity bit offsets, null
// bitmaps, lengths around the vector width and several grid sizes, and
// checks every state word against a plain sequential computation (exact
// 128/192-bit sums; floats within a bound, NaN/Inf/-0 rules exactly). The
// ordered kernels run after the fused one on its state, over columns full of
// ties (and all-NaN, all-null, -0/+0 ones), and every word is checked
// against a sequential scan: first/last valid element, first minimum and
// maximum (earliest wins), the raw bits of the first and last values.
// Build and run: kernels/emu/run.sh
#include "emu.h"
#include "../agg.cu"
#include <cstdio>
#include <cstdlib>
#include <random>
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

int main() {
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
  test_ordered_all();
  printf("%s: %d failures\n", failures ? "FAIL" : "PASS", failures);
  return failures != 0;
}
