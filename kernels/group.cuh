// group.cuh: grouped aggregation over a dense key domain (GROUP BY of few
// keys), on agg.cu's layers; agg.cu includes it, after its kinds.
//
// One launch of arrowagg_group_<value kind> folds a value column into the
// states of the groups of a key column: row r's group is key[r] - kmin for
// an integer key column (int8 ... uint64, the key widened to 64 bits first),
// whose keys the host knows to lie in [kmin, kmin + groups) (from the
// column's min and max), or the index itself for a dictionary's index
// column (kmin 0, groups the dictionary's length); a null key is group
// `groups`, its own group as in SQL. A selection bitmap (and its validity:
// a null selects nothing, as a WHERE clause's NULL) skips the rows whose bit
// is 0. Per group the launch yields the value kind's family state (the
// per-kind kernels' words, agg.cu), then the group's rows: the selected rows
// of the group, valid value or not (count(*); the state's count is the
// valid values').
//
// The groups of a launch are a window [g0, g0 + window) of the domain
// [0, groups] (the null key's group included): the block's table of the
// window's groups lives in dynamic shared memory, at most
// AGG_GROUP_SHARED_BYTES, and a domain whose table does not fit is folded
// in several windows, one launch each over the same rows.
//
// Layers (as the per-kind kernels', with a table of states where they have
// one state):
//
//   thread  block b takes the tiles b, b + gridDim.x, ... of kGroupTile
//           consecutive rows; thread t holds rows t, t + kBlockThreads, ...
//           of a tile (kGroupItems of them, coalesced loads), each with its
//           group in the window (or none: not selected, another window);
//   block   the block's table in shared memory, field by field. Integers:
//           every thread folds its rows with shared-memory atomics (sums
//           in 32-bit limbs with their counts of carries and borrows:
//           exact 128-bit sums, whose integer additions commute,
//           like min and max, so the table does not depend on the order of
//           the atomics), into copy lane % copies of the table: with few
//           groups, as many copies as fit (up to one a lane), so that the
//           lanes of a warp rarely hit one word (whose atomics serialize);
//           the copies merge when the block is done. Floats of more
//           groups than a table per thread holds are summed the same way
//           (FloatExactTable, arrowagg_group_exact_<float kind>): a
//           launch's values scaled to integers of 160 bits, exact, when
//           they span no more (the host folds others with the tables
//           below). Otherwise a float sum depends on the order of its
//           additions, so there are no float atomics (the extremes and
//           counts, whose updates commute, may have integer ones). The
//           kernels arrowagg_group_threads_<float kind> (a window of very
//           few groups) have a table per thread (FloatThreadTable): each
//           thread folds its own rows into its own sums, and the threads'
//           sums of a group merge in a fixed tree when the block is done.
//           A window of at most AGG_GROUP_FLOAT_WARP_GROUPS groups has a
//           table per warp (FloatWarpTable): warp w folds its own slice of
//           each tile, 32 rows at a time, the lowest lane of each group
//           (__match_any_sync) folding the step's rows of its group in
//           lane order; the block's state of a group is its warps' entries
//           merged in warp order. A larger window has one table
//           (FloatTable): each group belongs to one warp (group % warps);
//           the tile is staged in shared memory sorted by owning warp, in
//           row order within each (a stable counting sort), and each warp
//           walks its rows, 32 at a time, the lowest lane of each group in
//           the step (__match_any_sync) folding the step's rows of its
//           group in lane order. Either way a group's state is a fixed order of State's
//           addPair over its rows, whatever the timing of the warps;
//   device  each block stores its table (field by field, the block's
//           partial), __threadfence(), takes its cluster's atomic ticket
//           (AGG_GROUP_CLUSTER consecutive blocks); the cluster's last
//           block merges the cluster's partials with the family's merge
//           (State.Merge) into the cluster's first partial, then takes the
//           launch's ticket; the last of those merges the clusters'
//           partials, writes the states and resets the tickets. Each merge
//           is in an order fixed by the count of partials (a group's lanes
//           each merge a strided set in order, then their states merge in
//           a fixed tree: merge_partials). The result depends on the grid (which
//           rows each block folds), never on timing: bit for bit the same
//           run after run on a device.
//
// Parameters (all 64-bit):
//   keys, koff     the key column: element r is keys[koff + r];
//   kvalid, kbit   its validity bitmap (32-bit words; null: no null key);
//   kkind          the key column's KindCode (int8 ... uint64), read at run
//                  time: a kernel per value kind, not per pair of kinds;
//   kmin, groups   the domain: group = key - kmin (64-bit, the key sign- or
//                  zero-extended), in [0, groups); a null key is `groups`;
//   values, voff   the value column: element r is values[voff + r];
//   vvalid, vbit   its validity bitmap (null: every value valid);
//   sel, sbit      the selection bitmap (null: every row selected);
//   selv, svbit    the selection's validity (null: none null);
//   n              the rows;
//   g0, window     the launch's groups: [g0, g0 + window) of [0, groups];
//   partials       gridDim.x * ((K + 1) * window + 1) words of scratch;
//   ticket         1 + ceil(gridDim.x / AGG_GROUP_CLUSTER) zeroed 32-bit
//                  counters (the launch's, then a cluster's each), left
//                  zeroed again;
//   out            window * (K + 1) words: group g0 + j's state at
//                  out + j * (K + 1) (the family's K words, then its rows),
//                  then one word: the selected rows whose non-null key lay
//                  outside [kmin, kmin + groups) (0 unless the host's domain
//                  was wrong: such rows are in no group).
// Dynamic shared memory: the table's bytes(window) (kernels.GroupSharedBytes
// on the host). A block
// folds at most 2^31 - 1 rows (the 32-bit counters): the host bounds n by
// the grid.

namespace arrowagg {

constexpr int kGroupItems = AGG_GROUP_ITEMS;
constexpr int kGroupTile = kBlockThreads * kGroupItems;
constexpr int kGroupCluster = AGG_GROUP_CLUSTER;
constexpr int kGroupSkip = -1;        // a row in no group of the window
constexpr int kGroupNullValue = 1 << 30;  // staged group flag: the value is null
static_assert(AGG_GROUP_MAX < kGroupNullValue, "groups below the staged flag");
static_assert(AGG_GROUP_FLOAT_STAGE_BYTES == kGroupTile * 12, "a staged row is a double and a 32-bit group");

// GroupIn is a launch's rows and window (the parameters above).
struct GroupIn {
  const void* keys;
  uint64_t koff;
  const uint32_t* kvalid;
  uint64_t kbit, kmin, groups;
  const void* values;
  uint64_t voff;
  const uint32_t* vvalid;
  uint64_t vbit;
  const uint32_t* sel;
  uint64_t sbit;
  const uint32_t* selv;
  uint64_t svbit, n, g0, window;
  unsigned kwidth;  // the key's bytes (1, 2, 4, 8)
  bool ksigned;     // the key is signed
};

template <typename T> __device__ __forceinline__ uint64_t widen_bits(T x) {
  return T(-1) < T(0) ? (uint64_t)(int64_t)x : (uint64_t)x;
}

// load_key is row r's key, sign- or zero-extended to 64 bits (a branch on
// the key's width, a parameter of the launch: see load_keys).
__device__ __forceinline__ uint64_t load_key(const GroupIn& in, uint64_t r) {
  const uint64_t i = in.koff + r;
  uint64_t k;
  switch (in.kwidth) {
    case 1: k = static_cast<const uint8_t*>(in.keys)[i]; break;
    case 2: k = static_cast<const uint16_t*>(in.keys)[i]; break;
    case 4: k = static_cast<const uint32_t*>(in.keys)[i]; break;
    default: k = static_cast<const uint64_t*>(in.keys)[i]; break;
  }
  const unsigned sh = 64 - 8 * in.kwidth;
  return in.ksigned ? (uint64_t)((int64_t)(k << sh) >> sh) : k;
}

// keys_as reads the keys (of type KT, zero-extended) of a thread's rows
// first + i * stride of a tile, 0 past the rows (kWhole: the rows are all
// below n), all loads in flight together.
template <typename KT, bool kWhole>
__device__ __forceinline__ void keys_as(const GroupIn& in, uint64_t first, uint64_t stride, uint64_t (&k)[kGroupItems]) {
  const KT* __restrict__ keys = static_cast<const KT*>(in.keys) + in.koff;
#pragma unroll
  for (int i = 0; i < kGroupItems; i++) {
    const uint64_t r = first + (uint64_t)i * stride;
    k[i] = kWhole || r < in.n ? (uint64_t)keys[r] : 0;
  }
}

// load_keys reads the keys of a thread's rows first + i * stride of a tile,
// sign- or zero-extended to 64 bits. The key's kind is a parameter of the
// launch, not of the kernel's template (a kernel per value kind, not per
// pair of kinds): one uniform branch a tile, so that a thread's key loads
// are in flight together, as its values' are (a branch a row would wait for
// each key before loading the next).
template <bool kWhole = false>
__device__ __forceinline__ void load_keys(const GroupIn& in, uint64_t first, uint64_t stride, uint64_t (&k)[kGroupItems]) {
  switch (in.kwidth) {
    case 1: keys_as<uint8_t, kWhole>(in, first, stride, k); break;
    case 2: keys_as<uint16_t, kWhole>(in, first, stride, k); break;
    case 4: keys_as<uint32_t, kWhole>(in, first, stride, k); break;
    default: keys_as<uint64_t, kWhole>(in, first, stride, k); break;
  }
  if (in.ksigned && in.kwidth < 8) {  // (a 64-bit key is its own extension)
    const unsigned sh = 64 - 8 * in.kwidth;
#pragma unroll
    for (int i = 0; i < kGroupItems; i++) k[i] = (uint64_t)((int64_t)(k[i] << sh) >> sh);
  }
}

// group_of is the group in the window of row r, whose key (load_keys) is
// key, or kGroupSkip; a selected row whose non-null key is outside the
// domain counts in bad.
__device__ __forceinline__ int group_of(const GroupIn& in, uint64_t r, uint64_t key, unsigned& bad) {
  if (in.sel != nullptr && bit_at(in.sel, in.sbit + r) == 0) return kGroupSkip;
  if (in.selv != nullptr && bit_at(in.selv, in.svbit + r) == 0) return kGroupSkip;
  uint64_t g = in.groups;  // the null key's group
  if (in.kvalid == nullptr || bit_at(in.kvalid, in.kbit + r) != 0) {
    g = key - in.kmin;
    if (g >= in.groups) {
      bad++;
      return kGroupSkip;
    }
  }
  g -= in.g0;  // below g0: wraps above the window
  return g < in.window ? (int)g : kGroupSkip;
}

// match_any is the lanes of the warp whose v is this lane's
// (__match_any_sync, sm_70 and later; before, a ballot per distinct value).
// Every lane of the warp calls it.
__device__ __forceinline__ unsigned match_any(int v) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700
  return __match_any_sync(kFullMask, v);
#else
  unsigned peers = 0;
  for (unsigned left = kFullMask; left != 0;) {
    const int lv = __shfl_sync(kFullMask, v, (int)lowest_bit(left));
    const unsigned m = __ballot_sync(kFullMask, v == lv);
    if (v == lv) peers = m;
    left &= ~m;
  }
  return peers;
#endif
}

// GroupRows are a thread's rows of a tile: group (kGroupSkip for none),
// value and its validity.
template <typename VT> struct GroupRows {
  int g[kGroupItems];
  VT x[kGroupItems];
  bool ok[kGroupItems];

  // load reads rows base + threadIdx.x + i * kBlockThreads, the values
  // before the bitmaps so that the loads are in flight together, and the
  // keys together too (load_keys) unless kKeysTogether is false: then a key
  // at a time (load_key), as the wide kernels do (a tile's keys in flight
  // together made their launch at a million groups slower: 14.5 ms a call
  // against 11.5 on the H200, where the other grouped kernels gained 11-23%).
  //
  // A whole tile of a launch with no selection and no null keys (the
  // common case: a uniform branch a tile) takes load_plain, whose rows need
  // no bounds and whose groups need no bitmaps.
  template <bool kKeysTogether = true>
  __device__ __forceinline__ void load(const GroupIn& in, uint64_t base, unsigned& bad) {
    if (kKeysTogether && in.sel == nullptr && in.selv == nullptr && in.kvalid == nullptr && in.n - base >= kGroupTile) {
      load_plain(in, base, bad);
      return;
    }
    const VT* __restrict__ vals = static_cast<const VT*>(in.values) + in.voff;
#pragma unroll
    for (int i = 0; i < kGroupItems; i++) {
      const uint64_t r = base + threadIdx.x + (uint64_t)i * kBlockThreads;
      x[i] = r < in.n ? vals[r] : VT(0);
    }
    uint64_t k[kGroupItems];
    if (kKeysTogether) load_keys(in, base + threadIdx.x, kBlockThreads, k);
#pragma unroll
    for (int i = 0; i < kGroupItems; i++) {
      const uint64_t r = base + threadIdx.x + (uint64_t)i * kBlockThreads;
      g[i] = r < in.n ? group_of(in, r, kKeysTogether ? k[i] : load_key(in, r), bad) : kGroupSkip;
      ok[i] = in.vvalid == nullptr || (r < in.n && bit_at(in.vvalid, in.vbit + r) != 0);
    }
  }

  // load_plain is load of a whole tile (base + kGroupTile <= n) with
  // neither a selection nor a key bitmap: group_of without the bitmaps,
  // and without a branch a row.
  __device__ __forceinline__ void load_plain(const GroupIn& in, uint64_t base, unsigned& bad) {
    const VT* __restrict__ vals = static_cast<const VT*>(in.values) + in.voff + base + threadIdx.x;
#pragma unroll
    for (int i = 0; i < kGroupItems; i++) x[i] = vals[i * kBlockThreads];
    uint64_t k[kGroupItems];
    load_keys<true>(in, base + threadIdx.x, kBlockThreads, k);
#pragma unroll
    for (int i = 0; i < kGroupItems; i++) {
      const uint64_t d = k[i] - in.kmin, w = d - in.g0;  // (below g0: w wraps above the window)
      const bool out = d >= in.groups;
      bad += out;
      g[i] = !out && w < in.window ? (int)w : kGroupSkip;
    }
    if (in.vvalid == nullptr) {
#pragma unroll
      for (int i = 0; i < kGroupItems; i++) ok[i] = true;
    } else {  // (rows kBlockThreads apart: bits a whole number of words apart, at one shift)
      static_assert(kBlockThreads % 32 == 0, "a block's threads: whole words of a bitmap");
      const uint64_t p = in.vbit + base + threadIdx.x;
      const uint32_t* __restrict__ w = in.vvalid + (p >> 5);
      const unsigned sh = (unsigned)p & 31;
#pragma unroll
      for (int i = 0; i < kGroupItems; i++) ok[i] = (__ldg(w + i * (kBlockThreads / 32)) >> sh & 1u) != 0;
    }
  }
};

// group_replicas is the number of copies of a block's integer table of p
// groups: the most, a power of two up to a warp's lanes, that fit
// AGG_GROUP_SHARED_BYTES. Lane l folds into copy l % replicas, so that the
// lanes of a warp whose rows fall in one group (few groups: most of them)
// mostly hit distinct words, not one word whose atomics serialize; the
// copies merge when the block is done (kernels.GroupReplicas is the same
// function).
__device__ __forceinline__ uint64_t group_replicas(uint64_t p) {
  uint64_t r = kWarpThreads;
  while (r > 1 && p * r * AGG_GROUP_INT_ENTRY_BYTES > AGG_GROUP_SHARED_BYTES) r >>= 1;
  return r;
}

// IntTable is a block's table of integer states in shared memory, field
// by field: {min, max} as 64-bit words, {rows, count, sum a0, sum a1, sum
// c0, sum c1} as 32-bit ones (AGG_GROUP_INT_ENTRY_BYTES a group and copy),
// copy c of group g at g * replicas + c. The sum is kept in 32-bit limbs,
// whose atomics shared memory has (a 64-bit one is a compare-and-swap
// loop): a0 and a1 sum the values' low and high 32-bit halves, c0 counts
// the carries out of a0, c1 the carries out of a1 less the negative values
// (signed). The 128-bit sum is a0 + 2^32 (c0 + a1) + 2^64 c1, exact for the
// 2^31 rows a block may fold.
template <typename VT, class Fam> struct IntTable {
  static constexpr bool kSigned = VT(-1) < VT(0);
  uint64_t reps;  // copies of the table (group_replicas)
  unsigned long long *mn, *mx;
  unsigned *rows, *cnt, *a0, *a1, *c0;
  int* c1;
  bool all_valid;  // the values have no nulls: a group's count is its rows, cnt is not kept

  __device__ IntTable(unsigned long long* smem, uint64_t p, bool all_valid_)
      : reps(group_replicas(p)),
        mn(smem),
        mx(smem + p * reps),
        rows((unsigned*)(smem + 2 * p * reps)),
        cnt(rows + p * reps),
        a0(cnt + p * reps),
        a1(a0 + p * reps),
        c0(a1 + p * reps),
        c1((int*)(c0 + p * reps)),
        all_valid(all_valid_) {}

  __device__ static uint64_t bytes(uint64_t p) { return p * group_replicas(p) * AGG_GROUP_INT_ENTRY_BYTES; }

  __device__ void init(uint64_t p) {
    for (uint64_t j = threadIdx.x; j < p * reps; j += kBlockThreads) {
      mn[j] = kSigned ? (unsigned long long)INT64_MAX : UINT64_MAX;
      mx[j] = kSigned ? (unsigned long long)INT64_MIN : 0;
      rows[j] = cnt[j] = a0[j] = a1[j] = c0[j] = 0;
      c1[j] = 0;
    }
  }

  // add folds a row into entry e (a group's copy). Min and max are 64-bit:
  // they are read first, and their compare-and-swap loop runs only when x
  // would change them (a stale read is never below the minimum nor above
  // the maximum: they only move one way, so a skipped x could not have
  // changed them).
  __device__ __forceinline__ void add(uint64_t e, VT x, bool ok) {
    atomicAdd(&rows[e], 1u);
    if (!ok) return;
    if (!all_valid) atomicAdd(&cnt[e], 1u);
    const unsigned long long u = widen_bits(x);
    const unsigned l = (unsigned)u, h = (unsigned)(u >> 32);
    const unsigned o0 = atomicAdd(&a0[e], l);
    if (o0 + l < l) atomicAdd(&c0[e], 1u);
    int inc = kSigned && x < VT(0) ? -1 : 0;
    if (h != 0) {
      const unsigned o1 = atomicAdd(&a1[e], h);
      inc += (int)(o1 + h < h);
    }
    if (inc != 0) atomicAdd(&c1[e], inc);
    const unsigned long long cmn = *(volatile unsigned long long*)&mn[e];
    const unsigned long long cmx = *(volatile unsigned long long*)&mx[e];
    if (kSigned) {
      if ((long long)u < (long long)cmn) atomicMin((long long*)&mn[e], (long long)u);
      if ((long long)u > (long long)cmx) atomicMax((long long*)&mx[e], (long long)u);
    } else {
      if (u < cmn) atomicMin(&mn[e], u);
      if (u > cmx) atomicMax(&mx[e], u);
    }
  }

  // fold adds a tile's rows of this thread.
  __device__ __forceinline__ void fold(const GroupIn& in, uint64_t base, unsigned& bad) {
    GroupRows<VT> rs;
    rs.load(in, base, bad);
    const uint64_t copy = threadIdx.x % kWarpThreads & (reps - 1);
#pragma unroll
    for (int i = 0; i < kGroupItems; i++)
      if (rs.g[i] != kGroupSkip) add((uint64_t)rs.g[i] * reps + copy, rs.x[i], rs.ok[i]);
  }

  // state is group j's state, its copies merged.
  __device__ __forceinline__ typename Fam::State state(uint64_t j) const {
    typename Fam::State s = Fam::identity();
    for (uint64_t e = j * reps; e < (j + 1) * reps; e++) {
      // The limbs as the state's 128-bit sum {lo, hi}.
      const uint64_t t = (uint64_t)c0[e] + a1[e], ts = t << 32, lo = a0[e] + ts;
      const int64_t hi = (int64_t)c1[e] + (int64_t)(t >> 32) + (lo < ts ? 1 : 0);
      const typename Fam::State c{{lo, (uint64_t)hi, mn[e], mx[e], all_valid ? rows[e] : cnt[e]}};
      Fam::merge(s, c);
    }
    return s;
  }
  __device__ __forceinline__ uint64_t group_rows(uint64_t j) const {
    uint64_t r = 0;
    for (uint64_t e = j * reps; e < (j + 1) * reps; e++) r += rows[e];
    return r;
  }
  __device__ void settle() {}  // (the atomics left the table complete)
};

// add_pair_to is State's addPair (agg/state.go) with no compensation of x:
// x two-summed into (s, c), a non-finite result handed to special (the
// special word's add) and the sum restarted at 0.
template <class Special>
__device__ __forceinline__ void add_pair_to(double& s, double& c, double x, Special special) {
  const double t = s + x;
  if (!isfinite(t)) {
    special(t);
    s = 0;
    return;
  }
  const double z = t - s;
  c += (s - (t - z)) + (x - z);
  s = t;
}

// add_pair is add_pair_to with the special word in a register.
__device__ __forceinline__ void add_pair(double& s, double& c, double& special, double x) {
  add_pair_to(s, c, x, [&](double t) { special += t; });
}

// owner_warp is the warp that owns the group of a row with staged group g
// (kGroupNullValue may be set; FloatTable: group % warps), kBlockWarps for
// a row of no group of the window.
__device__ __forceinline__ int owner_warp(int g) {
  return g == kGroupSkip ? kBlockWarps : (g & (kGroupNullValue - 1)) % kBlockWarps;
}

// fold_float_rows folds the staged rows of mask m (x[l] and g[l] for each
// set bit l, lowest first: row order) into entry e of a float table tab
// (FloatTable, FloatWarpTable: their fields s, c, sp, kmn, kmx, rows,
// cnt), the entry held in registers meanwhile: one read and one write of
// each field a run, not a row (the lane that owns the group alone touches
// it meanwhile). A null row counts in rows alone; a number's row counts,
// moves the extremes (NaN skipped) and is two-summed (add_pair).
template <class Table>
__device__ __forceinline__ void fold_float_rows(const Table& tab, uint64_t e, unsigned m, const double* x, const int* g) {
  double s = tab.s[e], c = tab.c[e], sp = tab.sp[e];
  long long mn = tab.kmn[e], mx = tab.kmx[e];
  unsigned rows = tab.rows[e], cnt = tab.cnt[e];
  for (; m != 0; m &= m - 1) {
    const int l = (int)lowest_bit(m);
    rows++;
    if ((g[l] & kGroupNullValue) != 0) continue;
    const double v = x[l];
    cnt++;
    if (v == v) {  // min/max skip NaN
      const long long k = key64(v);
      mn = tmin(mn, k);
      mx = tmax(mx, k);
    }
    add_pair(s, c, sp, v);
  }
  tab.s[e] = s, tab.c[e] = c, tab.sp[e] = sp;
  tab.kmn[e] = mn, tab.kmx[e] = mx;
  tab.rows[e] = rows, tab.cnt[e] = cnt;
}

// FloatTable is a block's table of float states in shared memory, field by
// field: {sum, compensation, special, min key, max key} as 64-bit words,
// {rows, count} as 32-bit ones, and a spare word (AGG_GROUP_FLOAT_ENTRY_BYTES
// a group), after the staged tile: its values (double: float32 widens exactly) and
// groups (kGroupNullValue set when the value is null).
template <typename VT> struct FloatTable {
  double *sx, *s, *c, *sp;
  long long *kmn, *kmx;
  int* sg;
  unsigned *rows, *cnt;

  __device__ FloatTable(unsigned long long* smem, uint64_t p)
      : sx((double*)smem),
        s(sx + kGroupTile),
        c(s + p),
        sp(c + p),
        kmn((long long*)(sp + p)),
        kmx(kmn + p),
        sg((int*)(kmx + p)),
        rows((unsigned*)(sg + kGroupTile)),
        cnt(rows + p) {}

  __device__ static uint64_t bytes(uint64_t p) { return AGG_GROUP_FLOAT_STAGE_BYTES + p * AGG_GROUP_FLOAT_ENTRY_BYTES; }

  __device__ void init(uint64_t p) {
    for (uint64_t j = threadIdx.x; j < p; j += kBlockThreads) {
      s[j] = c[j] = sp[j] = 0;
      kmn[j] = kKey64PosInf;
      kmx[j] = kKey64NegInf;
      rows[j] = cnt[j] = 0;
    }
  }

  // fold stages a tile, its rows sorted by the warp that owns their groups
  // (group % warps), in row order within each warp's (a stable counting
  // sort: the rows of no group of the window are left out), then each warp
  // folds its rows, 32 at a time: the lowest lane of each group in the step
  // (__match_any_sync) folds the step's rows of its group in lane order. A
  // group's rows are thus folded in row order, as a walk of the whole tile
  // by every warp would fold them, but a warp reads only its own rows.
  __device__ __forceinline__ void fold(const GroupIn& in, uint64_t base, unsigned& bad) {
    // The sort's counts, by bucket (the owning warp), then by slab (item
    // i: rows i * kBlockThreads ... of the tile) and warp: the rows' order.
    constexpr int kScan = kGroupItems * kBlockWarps;
    static_assert(kScan == 2 * kWarpThreads, "a bucket's counts are scanned two a lane");
    static_assert(kBlockWarps * kScan * 2 + kBlockWarps * 4 <= kGroupTile * 8, "the sort's counts fit the staged values");
    GroupRows<VT> rs;
    rs.load(in, base, bad);
#pragma unroll
    for (int i = 0; i < kGroupItems; i++) {  // the value's validity as the group's flag
      if (rs.g[i] != kGroupSkip && !rs.ok[i]) rs.g[i] |= kGroupNullValue;
    }
    const int lane = threadIdx.x % kWarpThreads, warp = threadIdx.x / kWarpThreads;
    const unsigned below = (1u << lane) - 1;
    unsigned short* counts = (unsigned short*)sx;  // (the stage's room, until the rows are staged)
    int* totals = (int*)(counts + kBlockWarps * kScan);
    __syncthreads();  // the previous tile's stage is read
    for (int j = threadIdx.x; j < kBlockWarps * kScan; j += kBlockThreads) counts[j] = 0;
    __syncthreads();
    int at[kGroupItems];  // the row's rank among its warp's lanes of its bucket, then its place in the stage
#pragma unroll
    for (int i = 0; i < kGroupItems; i++) {
      const int b = owner_warp(rs.g[i]);
      const unsigned peers = match_any(b);
      at[i] = __popc(peers & below);
      if (b < kBlockWarps && at[i] == 0) counts[b * kScan + i * kBlockWarps + warp] = (unsigned short)__popc(peers);
    }
    __syncthreads();
    {  // warp w scans bucket w's counts (exclusive), two a lane
      unsigned short* row = counts + warp * kScan;
      const int a0 = row[2 * lane], a1 = row[2 * lane + 1];
      int incl = a0 + a1;
#pragma unroll
      for (int d = 1; d < kWarpThreads; d <<= 1) {
        const int y = __shfl_up_sync(kFullMask, incl, d);
        if (lane >= d) incl += y;
      }
      row[2 * lane] = (unsigned short)(incl - a0 - a1);
      row[2 * lane + 1] = (unsigned short)(incl - a1);
      if (lane == kWarpThreads - 1) totals[warp] = incl;
    }
    __syncthreads();
    int tot[kBlockWarps];  // (registers: indexed by unrolled loops alone)
#pragma unroll
    for (int b = 0; b < kBlockWarps; b++) tot[b] = totals[b];
    int lo = 0, hi = 0;  // the warp's rows in the stage
#pragma unroll
    for (int b = 0; b < kBlockWarps; b++) {
      lo += b < warp ? tot[b] : 0;
      hi += b <= warp ? tot[b] : 0;
    }
#pragma unroll
    for (int i = 0; i < kGroupItems; i++) {
      const int b = owner_warp(rs.g[i]);
      if (b < kBlockWarps) {
        int start = 0;
#pragma unroll
        for (int j = 0; j < kBlockWarps; j++) start += j < b ? tot[j] : 0;
        at[i] += start + counts[b * kScan + i * kBlockWarps + warp];
      }
    }
    __syncthreads();  // the counts are read: the stage takes their room
#pragma unroll
    for (int i = 0; i < kGroupItems; i++) {
      if (rs.g[i] != kGroupSkip) {
        sx[at[i]] = (double)rs.x[i];
        sg[at[i]] = rs.g[i];
      }
    }
    __syncthreads();
    for (int r0 = lo; r0 < hi; r0 += kWarpThreads) {
      const int r = r0 + lane;
      const int e = r < hi ? sg[r] : kGroupSkip;
      const int g = e == kGroupSkip ? kGroupSkip : e & (kGroupNullValue - 1);
      const unsigned peers = match_any(g);
      if (g != kGroupSkip && (peers & below) == 0) {
        // The group's lowest lane: the step's rows of the group, in order.
        fold_float_rows(*this, g, peers, sx + r0, sg + r0);
      }
    }
  }

  __device__ __forceinline__ FloatFamily::State state(uint64_t j) const {
    return FloatFamily::State{{f64_bits(s[j]), f64_bits(c[j]), f64_bits(sp[j]), (uint64_t)kmn[j], (uint64_t)kmx[j],
                               cnt[j]}};
  }
  __device__ __forceinline__ uint64_t group_rows(uint64_t j) const { return rows[j]; }
  __device__ void settle() {}
};

// FloatWarpTable is a block's float states for a window of few groups
// (at most AGG_GROUP_FLOAT_WARP_GROUPS): a table per warp, field by field
// (entry w * p + g: FloatTable's fields), then a staged step per warp.
// Warp w folds rows [w * 32 * kGroupItems, (w + 1) * 32 * kGroupItems) of
// each tile, 32 at a time: the lowest lane of each group in the step
// (match_any) folds the step's rows of its group in lane order, so a
// warp's entry of a group is the sequential fold of its rows of that group
// in row order. The block's state of a group is
// its warps' entries merged in warp order (FloatFamily::merge): fixed by
// the grid, never by timing.
template <typename VT> struct FloatWarpTable {
  uint64_t p;
  double *s, *c, *sp;
  long long *kmn, *kmx;
  unsigned *rows, *cnt;
  double* sx;  // staged values, 32 a warp
  int* sg;     // staged groups (kGroupNullValue set: null value)

  __device__ FloatWarpTable(unsigned long long* smem, uint64_t p_)
      : p(p_),
        s((double*)smem),
        c(s + kBlockWarps * p_),
        sp(c + kBlockWarps * p_),
        kmn((long long*)(sp + kBlockWarps * p_)),
        kmx(kmn + kBlockWarps * p_),
        rows((unsigned*)(kmx + kBlockWarps * p_)),
        cnt(rows + kBlockWarps * p_),
        sx((double*)(smem + (kBlockWarps * p_ * AGG_GROUP_FLOAT_ENTRY_BYTES + 7) / 8)),
        sg((int*)(sx + kBlockThreads)) {}

  __device__ static uint64_t bytes(uint64_t p) {
    return (kBlockWarps * p * AGG_GROUP_FLOAT_ENTRY_BYTES + 7) / 8 * 8 + kBlockThreads * 12;
  }

  __device__ void init(uint64_t) {
    for (uint64_t j = threadIdx.x; j < kBlockWarps * p; j += kBlockThreads) {
      s[j] = c[j] = sp[j] = 0;
      kmn[j] = kKey64PosInf;
      kmx[j] = kKey64NegInf;
      rows[j] = cnt[j] = 0;
    }
  }

  // fold folds the warp's rows of a tile: its loads first, then its steps.
  __device__ __forceinline__ void fold(const GroupIn& in, uint64_t base, unsigned& bad) {
    const VT* __restrict__ vals = static_cast<const VT*>(in.values) + in.voff;
    const int lane = threadIdx.x % kWarpThreads, warp = threadIdx.x / kWarpThreads;
    const uint64_t first = base + (uint64_t)warp * kWarpThreads * kGroupItems + lane;
    VT x[kGroupItems];
    int g[kGroupItems];
#pragma unroll
    for (int i = 0; i < kGroupItems; i++) {
      const uint64_t r = first + (uint64_t)i * kWarpThreads;
      x[i] = r < in.n ? vals[r] : VT(0);
    }
    uint64_t k[kGroupItems];
    load_keys(in, first, kWarpThreads, k);
#pragma unroll
    for (int i = 0; i < kGroupItems; i++) {
      const uint64_t r = first + (uint64_t)i * kWarpThreads;
      g[i] = r < in.n ? group_of(in, r, k[i], bad) : kGroupSkip;
      if (g[i] != kGroupSkip && in.vvalid != nullptr && bit_at(in.vvalid, in.vbit + r) == 0) g[i] |= kGroupNullValue;
    }
    double* wx = sx + warp * kWarpThreads;
    int* wg = sg + warp * kWarpThreads;
    const uint64_t t0 = (uint64_t)warp * p;
    const unsigned below = (1u << lane) - 1;
#pragma unroll
    for (int i = 0; i < kGroupItems; i++) {
      wx[lane] = (double)x[i];
      wg[lane] = g[i];
      const int mine = g[i] == kGroupSkip ? kGroupSkip : g[i] & (kGroupNullValue - 1);
      const unsigned peers = match_any(mine);
      __syncwarp();  // the step is staged
      if (mine != kGroupSkip && (peers & below) == 0) {
        // The group's lowest lane: the step's rows of the group, in order.
        fold_float_rows(*this, t0 + mine, peers, wx, wg);
      }
      __syncwarp();  // the stage is free for the next step
    }
  }

  // state is group j's state: its warps' entries merged in warp order.
  __device__ __forceinline__ FloatFamily::State state(uint64_t j) const {
    FloatFamily::State a = FloatFamily::identity();
    for (int w = 0; w < kBlockWarps; w++) {
      const uint64_t e = (uint64_t)w * p + j;
      const FloatFamily::State b{{f64_bits(s[e]), f64_bits(c[e]), f64_bits(sp[e]), (uint64_t)kmn[e], (uint64_t)kmx[e],
                                  cnt[e]}};
      FloatFamily::merge(a, b);
    }
    return a;
  }
  __device__ __forceinline__ uint64_t group_rows(uint64_t j) const {
    uint64_t r = 0;
    for (int w = 0; w < kBlockWarps; w++) r += rows[(uint64_t)w * p + j];
    return r;
  }
  __device__ void settle() {}  // (state merges the warps' entries)
};

// add_special adds t (not finite: a special's term) to the special word
// at p by a compare-and-swap loop. A sum of infinities and NaNs is the
// same value in any order (a NaN as soon as one is a NaN or both
// infinities appear; the device's NaNs are its own, whatever the
// operands'), so such a word may be shared by lanes whose order varies.
__device__ __forceinline__ void add_special(double* p, double t) {
  unsigned long long* w = (unsigned long long*)p;
  unsigned long long old = *(volatile unsigned long long*)w, seen;
  do {
    seen = old;
    old = atomicCAS(w, seen, f64_bits(as_f64(seen) + t));
  } while (old != seen);
}

// count_row folds a row into the fields of entry r of a float table whose
// updates commute, by shared-memory atomics: the row, and its null value
// or its number's extremes as order keys (NaN skipped; a stale read never
// hides a change: they move one way). It reports whether the value is
// valid (the table's sum takes it).
template <typename I, typename VT>
__device__ __forceinline__ bool count_row(unsigned* rows, unsigned* nulls, long long* kmn, long long* kmx, I r, bool ok,
                                          VT x) {
  atomicAdd(&rows[r], 1u);
  if (!ok) {
    atomicAdd(&nulls[r], 1u);
    return false;
  }
  const double v = (double)x;
  if (v == v) {
    const long long k = key64(v);
    if (k < *(volatile long long*)&kmn[r]) atomicMin(&kmn[r], k);
    if (k > *(volatile long long*)&kmx[r]) atomicMax(&kmx[r], k);
  }
  return true;
}

// FloatThreadTable is a block's float states for a window of very few
// groups: the sums (sum, compensation) a table per thread, field by field
// (entry j * kBlockThreads + t, AGG_GROUP_FLOAT_THREAD_ENTRY_BYTES a group
// and thread), then the block's fields of a group that do not depend on
// the order of its rows: its special (the sum of its non-finite partial
// sums, add_special) and, in AGG_GROUP_FLOAT_THREAD_COPIES copies (entry
// j * copies + c: lane l's copy l % copies, so that a warp's lanes rarely
// meet on a word), its min key, max key, rows and null values (its count is
// the difference: one atomic a valid row, not two), raised and counted by
// shared-memory atomics; all in the launch's dynamic shared memory (the
// host launches these kernels, arrowagg_group_threads_<float kind>, for a
// domain whose tables leave room for several blocks a multiprocessor:
// kernels.PlanGroupLaunch). Thread t folds its rows of each tile
// (GroupRows: rows t, t + kBlockThreads, ... of the tile) one after the
// other into its own sums: no lane shares them, so there is no match of
// lanes, no staging and no barrier a tile, and the sums of a lane lie at
// words 2t (mod 32) whatever their group, so that a warp's lanes meet on a
// bank only as 64-bit words do. When the block is done (settle), each
// group's threads' sums merge in a fixed tree (FloatFamily::merge: thread t
// takes thread t + off's, off = kBlockThreads / 2, ..., 1; the tree's own
// non-finite sums go to the special) and its copies into the first: a
// group's state is fixed by the grid, never by timing.
template <typename VT> struct FloatThreadTable {
  static constexpr unsigned kCopies = AGG_GROUP_FLOAT_THREAD_COPIES;
  static_assert((kCopies & (kCopies - 1)) == 0 && kCopies <= kWarpThreads, "copies: a power of two, at most a warp's lanes");
  unsigned p;
  double *s, *c;         // a thread's: entry j * kBlockThreads + t
  double* sp;            // the block's: entry j
  long long *kmn, *kmx;  // the block's copies: entry j * kCopies + copy
  unsigned *rows, *nulls;  // (a group's count is its rows less its nulls)

  __device__ FloatThreadTable(unsigned long long* smem, uint64_t p_)
      : p((unsigned)p_),
        s((double*)smem),
        c(s + kBlockThreads * p_),
        sp(c + kBlockThreads * p_),
        kmn((long long*)(sp + p_)),
        kmx(kmn + kCopies * p_),
        rows((unsigned*)(kmx + kCopies * p_)),
        nulls(rows + kCopies * p_) {}

  __device__ static uint64_t bytes(uint64_t p) {
    return p * (kBlockThreads * AGG_GROUP_FLOAT_THREAD_ENTRY_BYTES + 8 + kCopies * AGG_GROUP_FLOAT_THREAD_SHARED_BYTES);
  }

  __device__ void init(uint64_t) {
    for (unsigned j = threadIdx.x; j < kBlockThreads * p; j += kBlockThreads) s[j] = c[j] = 0;
    for (unsigned j = threadIdx.x; j < p; j += kBlockThreads) sp[j] = 0;
    for (unsigned j = threadIdx.x; j < kCopies * p; j += kBlockThreads) {
      kmn[j] = kKey64PosInf;
      kmx[j] = kKey64NegInf;
      rows[j] = nulls[j] = 0;
    }
  }

  // fold folds this thread's rows of a tile, in row order: a null value's
  // row counts in rows alone; a number's row counts, moves the extremes
  // (NaN skipped; a stale read never hides a change: they move one way)
  // and is two-summed into the thread's sums (add_pair_to, its non-finite
  // sums into the group's special).
  __device__ __forceinline__ void fold(const GroupIn& in, uint64_t base, unsigned& bad) {
    GroupRows<VT> rs;
    rs.load(in, base, bad);
    const unsigned copy = threadIdx.x % kCopies;
#pragma unroll
    for (int i = 0; i < kGroupItems; i++) {
      if (rs.g[i] == kGroupSkip) continue;
      const unsigned g = (unsigned)rs.g[i], r = g * kCopies + copy;
      if (!count_row(rows, nulls, kmn, kmx, r, rs.ok[i], rs.x[i])) continue;
      const double v = (double)rs.x[i];
      const unsigned e = g * kBlockThreads + threadIdx.x;
      double a = s[e], cc = c[e];
      add_pair_to(a, cc, v, [&](double t) { add_special(&sp[g], t); });
      s[e] = a, c[e] = cc;
    }
  }

  // settle merges each group's threads' sums into its thread 0's, in the
  // tree, and its copies into its first.
  __device__ void settle() {
    for (unsigned off = kBlockThreads / 2; off > 0; off /= 2) {
      __syncthreads();  // the sums of the level before are written
      for (unsigned i = threadIdx.x; i < p * off; i += kBlockThreads) {
        const unsigned j = i / off, a = j * kBlockThreads + i % off, b = a + off;
        FloatFamily::State x = sums(a);
        FloatFamily::merge(x, sums(b));
        s[a] = as_f64(x.w[0]), c[a] = as_f64(x.w[1]);
        if (x.w[2] != 0) add_special(&sp[j], as_f64(x.w[2]));  // (the two sums' total was not finite)
      }
    }
    for (unsigned j = threadIdx.x; j < p; j += kBlockThreads) {  // (the copies, written before the first barrier)
      const unsigned e = j * kCopies;
      for (unsigned r = e + 1; r < e + kCopies; r++) {
        kmn[e] = tmin(kmn[e], kmn[r]);
        kmx[e] = tmax(kmx[e], kmx[r]);
        rows[e] += rows[r];
        nulls[e] += nulls[r];
      }
    }
    __syncthreads();  // the specials of the tree's last level are added
  }

  // sums is entry e's sums as a state of no special and no value
  // (FloatFamily::merge's sum and compensation depend on neither).
  __device__ __forceinline__ FloatFamily::State sums(unsigned e) const {
    return FloatFamily::State{{f64_bits(s[e]), f64_bits(c[e]), 0, (uint64_t)kKey64PosInf, (uint64_t)kKey64NegInf, 0}};
  }
  __device__ __forceinline__ FloatFamily::State state(uint64_t j) const {
    FloatFamily::State x = sums((unsigned)j * kBlockThreads);
    const unsigned e = (unsigned)j * kCopies;
    x.w[2] = f64_bits(sp[j]);
    x.w[3] = (uint64_t)kmn[e], x.w[4] = (uint64_t)kmx[e], x.w[5] = rows[e] - nulls[e];
    return x;
  }
  __device__ __forceinline__ uint64_t group_rows(uint64_t j) const { return rows[(unsigned)j * kCopies]; }
};

// ---------------------------------------------- exact float groups

// The exact float kernels (arrowagg_group_exact_<float kind>) keep a
// group's sum as an integer: every value is a multiple of a power of two,
// so once a launch knows a power of two 2^E above all its values' sizes
// and one 2^lo below all their lowest set bits (arrowagg_float_scale_<float
// kind>, a pass over the column before, into two words), a value is an
// integer of units 2^base, base = E - 32 * kExactLimbs, whenever lo >= base:
// its digits are added to the group's limbs by 32-bit shared-memory
// atomics, each carry (or borrow) out of a limb counted beside it. Integer
// additions commute: the block's table is the exact sum of its rows
// whatever the order of the atomics, as the integer tables' (IntTable),
// so it needs no staging, no matching of lanes and no float atomics. A
// launch whose values span more than its limbs (lo < base: a value would
// lose bits) folds nothing and raises *lost; the host then folds the
// window with the grouped kernel of compensated sums (FloatTable), as
// before. When a block is done, each group's exact sum becomes a state's
// sum and compensation (exact_pair: the sum rounded, and the rest
// rounded), so the device layer (group_finish) merges blocks as it
// merges the other float tables' (State.Merge, in an order fixed by the
// grid). Non-finite values go to the group's special word (add_special:
// their sum is the same in any order).

constexpr int kExactLimbs = AGG_GROUP_EXACT_LIMBS;

// ExactScale is a launch's scale (arrowagg_float_scale_<float kind>'s two
// words): hi the largest biased exponent of its valid finite values,
// lo_code 1100 - the exponent of the lowest set bit of the nonzero ones (0
// when there are none; atomicMax raises both words from 0).
struct ExactScale {
  int base;   // the weight of the lowest limb: 2^base
  bool fits;  // every value is an integer of units 2^base
  __device__ __forceinline__ ExactScale(unsigned hi, unsigned lo_code) {
    // |x| < 2^(max(hi, 1) - 1022) (a subnormal's exponent is 1 - 1023).
    base = (int)(hi > 1 ? hi : 1) - 1022 - 32 * kExactLimbs;
    fits = lo_code == 0 || 1100 - (int)lo_code >= base;
  }
};

// exact_bits is the significand of finite x (its integer: 53 bits) and the
// exponent of its unit: |x| = m * 2^e.
__device__ __forceinline__ uint64_t exact_bits(double x, int& e) {
  const uint64_t b = f64_bits(x);
  const unsigned eb = (unsigned)(b >> 52) & 0x7ffu;
  e = (int)(eb != 0 ? eb : 1) - 1075;
  return (b & ((1ULL << 52) - 1)) | (eb != 0 ? 1ULL << 52 : 0);
}

__device__ __forceinline__ unsigned ctz64(uint64_t x) {
#ifdef __CUDA_ARCH__
  return (unsigned)__ffsll((long long)x) - 1;
#else
  return (unsigned)__builtin_ctzll(x);  // x != 0 below
#endif
}

// exact_pair is the integer of digits d (base 2^32, d[0] the lowest) and
// signed top (times 2^(32 * kExactLimbs)), in units 2^base, as a sum and a
// compensation: its magnitude's parts, from the top, two-summed (they do
// not overlap, so the pair is within 2^-105 of it), the sign then applied.
// A sum beyond the doubles' range is an infinity, handed to special.
template <class Special>
__device__ __forceinline__ void exact_pair(uint32_t* d, int64_t top, int base, double& s, double& c,
                                           Special special) {
  const bool neg = top < 0;
  if (neg) {  // the magnitude: the two's complement of the whole
    uint64_t borrow = 1;
    for (int k = 0; k < kExactLimbs; k++) {
      const uint64_t nd = (uint64_t)(uint32_t)~d[k] + borrow;
      d[k] = (uint32_t)nd;
      borrow = nd >> 32;
    }
    top = (int64_t)(~(uint64_t)top + borrow);
  }
  s = scalbn((double)top, base + 32 * kExactLimbs), c = 0;  // (top < 2^53: exact)
  for (int k = kExactLimbs - 1; k >= 0; k--) {
    const double x = scalbn((double)d[k], base + 32 * k);
    const double t = s + x, z = t - s;
    c += (s - (t - z)) + (x - z);
    s = t;
  }
  if (!isfinite(s)) {
    special(neg ? -s : s);
    s = c = 0;
    return;
  }
  if (neg) s = -s, c = -c;
}

// exact_replicas is the number of copies of a block's exact table of p
// groups (group_replicas' rule for its entries): lane l folds into copy
// l % replicas.
__device__ __forceinline__ uint64_t exact_replicas(uint64_t p) {
  uint64_t r = kWarpThreads;
  while (r > 1 && p * r * AGG_GROUP_EXACT_ENTRY_BYTES + 8 * p + 8 > AGG_GROUP_SHARED_BYTES) r >>= 1;
  return r;
}

// FloatExactTable is a block's table of exact float states in shared
// memory, field by field, copy c of group g at entry g * replicas + c:
// {min key, max key} (64-bit), {rows, null values} (32-bit: a group's
// count is the difference), the limbs a[k] (32-bit, unsigned) and the
// count of the carries out of the top limb less its borrows (32-bit,
// signed), then each group's special (64-bit) and the block's lost word.
// A value's digits go up from its lowest limb, each with the carry (or
// borrow) out of the limb below, which the atomic's old value tells: a
// carry costs an atomic only where it leaves the value's limbs (about one
// value in two), not one a limb. The group's sum is sum over k of a[k]
// 2^(32 k) + 2^(32 kExactLimbs) top, in units 2^base, exact for the 2^31
// rows a block may fold.
template <typename VT> struct FloatExactTable {
  uint64_t reps;
  long long *kmn, *kmx;
  unsigned *rows, *nulls, *a;
  int* top;
  double* sp;
  unsigned* lost_block;
  const ExactScale scale;
  unsigned* lost;  // the launch's (device memory)

  __device__ FloatExactTable(unsigned long long* smem, uint64_t p, const unsigned* scale_words, unsigned* lost_)
      : reps(exact_replicas(p)),
        kmn((long long*)smem),
        kmx(kmn + p * reps),
        rows((unsigned*)(kmx + p * reps)),
        nulls(rows + p * reps),
        a(nulls + p * reps),
        top((int*)(a + kExactLimbs * p * reps)),
        sp((double*)(top + p * reps)),  // (48 bytes an entry: aligned)
        lost_block((unsigned*)(sp + p)),
        scale(__ldcg(scale_words), __ldcg(scale_words + 1)),
        lost(lost_) {}

  __device__ static uint64_t bytes(uint64_t p) {
    return p * exact_replicas(p) * AGG_GROUP_EXACT_ENTRY_BYTES + 8 * p + 8;  // (the entries' bytes a multiple of 8)
  }

  __device__ void init(uint64_t p) {
    for (uint64_t j = threadIdx.x; j < p * reps; j += kBlockThreads) {
      kmn[j] = kKey64PosInf;
      kmx[j] = kKey64NegInf;
      rows[j] = nulls[j] = 0;
      top[j] = 0;
      for (int k = 0; k < kExactLimbs; k++) a[k * p * reps + j] = 0;
    }
    for (uint64_t j = threadIdx.x; j < p; j += kBlockThreads) sp[j] = 0;
    if (threadIdx.x == 0) *lost_block = scale.fits ? 0u : 1u;
  }

  // add_digits adds digits d0, d1, d2 from limb k of entry e up (or takes
  // them away: neg), each with the carry (or borrow) out of the limb below;
  // a carry out of the digits' limbs goes on up, out of the top limb into
  // top. A limb past the top has no digit (the value is below 2^E).
  //
  // A digit and its carry in are dd = d + carry, up to 2^32: its low word
  // lo and high word hi. The limb's operand is y = (lo ^ nm) - nm (nm the
  // mask of neg), lo or 0 - lo, and the carry out of old + y, (old + y <
  // y), is a borrow's absence when taking away a nonzero lo (old >= lo).
  // A zero lo adds nothing: its carry out is hi. Every digit takes its
  // atomic, zero or not, so that a row's path has no branch a digit.
  __device__ __forceinline__ void add_digits(unsigned stride, unsigned e, int k, uint32_t d0, uint32_t d1,
                                             uint32_t d2, bool neg) {
    const uint32_t nm = neg ? ~0u : 0u;
    unsigned* p = a + (unsigned)k * stride + e;
    unsigned carry = 0;
#pragma unroll
    for (int j = 0; j < 3; j++, k++, p += stride) {
      if (k >= kExactLimbs) break;
      const uint32_t d = j == 0 ? d0 : j == 1 ? d1 : d2;
      const uint32_t lo = d + carry;
      const unsigned hi = lo < carry;  // (d + carry = 2^32)
      const uint32_t y = (lo ^ nm) - nm;
      const unsigned old = atomicAdd(p, y);
      carry = (((unsigned)(old + y < y) ^ (unsigned)neg) & (unsigned)(lo != 0)) | hi;
    }
    const uint32_t one = (1u ^ nm) - nm;  // 1 or 0xffffffff
    // A carry goes on past a limb that was all ones (a borrow past a zero).
    for (; carry != 0 && k < kExactLimbs; k++, p += stride) carry = atomicAdd(p, one) == ~nm;
    if (carry != 0) atomicAdd(&top[e], (int)one);
  }

  // fold adds a tile's rows of this thread: a null value's row counts in
  // rows and nulls; a number's row counts, moves the extremes (NaN
  // skipped; a stale read never hides a change: they move one way) and
  // adds its digits; a non-finite value goes to the special.
  __device__ __forceinline__ void fold(const GroupIn& in, uint64_t base, unsigned& bad) {
    if (!scale.fits) return;  // (uniform: the launch's scale; the host folds it again)
    GroupRows<VT> rs;
    rs.load(in, base, bad);
    const unsigned copy = threadIdx.x % kWarpThreads & (unsigned)(reps - 1), stride = (unsigned)(in.window * reps);
#pragma unroll
    for (int i = 0; i < kGroupItems; i++) {
      if (rs.g[i] == kGroupSkip) continue;
      const unsigned e = (unsigned)rs.g[i] * (unsigned)reps + copy;
      if (!count_row(rows, nulls, kmn, kmx, e, rs.ok[i], rs.x[i])) continue;
      const double v = (double)rs.x[i];
      if (!isfinite(v)) {
        add_special(&sp[rs.g[i]], v);
        continue;
      }
      int ex;
      uint64_t m = exact_bits(v, ex);
      if (m == 0) continue;
      int sh = ex - scale.base;
      if (sh < 0) m >>= -sh, sh = 0;  // (the bits below are zero: scale.fits)
      const int k0 = sh >> 5, b = sh & 31;
      const uint64_t t = m >> (32 - b);  // the digits above the first: m * 2^b / 2^32
      add_digits(stride, e, k0, (uint32_t)(m << b), (uint32_t)t, (uint32_t)(t >> 32), v < 0);
    }
  }

  // settle raises the launch's lost word when the block's scale did not
  // fit (every block of the launch sees the same scale).
  __device__ void settle() {
    if (threadIdx.x == 0 && *lost_block != 0) atomicOr(lost, 1u);
  }

  __device__ __forceinline__ FloatFamily::State state(uint64_t j) const {
    const uint64_t p = (uint64_t)(kmx - kmn) / reps, stride = p * reps;
    FloatFamily::State x = FloatFamily::identity();
    uint64_t r = 0, z = 0;
    uint64_t limb[kExactLimbs] = {};
    int64_t high = 0;
    for (uint64_t e = j * reps; e < (j + 1) * reps; e++) {
      x.w[3] = (uint64_t)tmin((int64_t)x.w[3], (int64_t)kmn[e]);
      x.w[4] = (uint64_t)tmax((int64_t)x.w[4], (int64_t)kmx[e]);
      r += rows[e], z += nulls[e];
      high += top[e];
      for (int k = 0; k < kExactLimbs; k++) limb[k] += a[k * stride + e];
    }
    // The copies' limbs as digits (base 2^32) and a signed top.
    uint32_t d[kExactLimbs];
    uint64_t t = 0;
    for (int k = 0; k < kExactLimbs; k++) {
      t += limb[k];
      d[k] = (uint32_t)t;
      t >>= 32;
    }
    double spec = sp[j], s, cc;
    exact_pair(d, high + (int64_t)t, scale.base, s, cc, [&](double inf) { spec += inf; });
    x.w[0] = f64_bits(s), x.w[1] = f64_bits(cc), x.w[2] = f64_bits(spec);
    x.w[5] = r - z;
    return x;
  }
  __device__ __forceinline__ uint64_t group_rows(uint64_t j) const {
    uint64_t r = 0;
    for (uint64_t e = j * reps; e < (j + 1) * reps; e++) r += rows[e];
    return r;
  }
};

// float_scale folds the valid finite values of rows [0, n) of a float
// column into a launch's scale words (ExactScale): the largest biased
// exponent, and 1100 less the exponent of the lowest set bit of the
// nonzero values, raised by atomicMax (a warp's lanes reduced first).
template <typename VT>
__device__ __forceinline__ void float_scale(const VT* values, uint64_t voff, const uint32_t* vvalid, uint64_t vbit,
                                            uint64_t n, unsigned* scale) {
  constexpr int kUnroll = 4;  // rows a thread has in flight
  unsigned hi = 0, lo = 0;
  const uint64_t step = (uint64_t)gridDim.x * kBlockThreads;
  for (uint64_t r0 = (uint64_t)blockIdx.x * kBlockThreads + threadIdx.x; r0 < n; r0 += kUnroll * step) {
    VT x[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; u++) x[u] = r0 + u * step < n ? values[voff + r0 + u * step] : VT(0);
#pragma unroll
    for (int u = 0; u < kUnroll; u++) {
      const uint64_t r = r0 + u * step;
      const double v = (double)x[u];
      if (r >= n || !isfinite(v) || (vvalid != nullptr && bit_at(vvalid, vbit + r) == 0)) continue;
      int ex;
      const uint64_t m = exact_bits(v, ex);
      if (m == 0) continue;
      hi = tmax(hi, (unsigned)(f64_bits(v) >> 52) & 0x7ffu);
      lo = tmax(lo, (unsigned)(1100 - (ex + (int)ctz64(m))));
    }
  }
#pragma unroll
  for (int off = kWarpThreads / 2; off > 0; off /= 2) {
    hi = tmax(hi, __shfl_down_sync(kFullMask, hi, off));
    lo = tmax(lo, __shfl_down_sync(kFullMask, lo, off));
  }
  if (threadIdx.x % kWarpThreads == 0 && hi != 0) {
    atomicMax(&scale[0], hi);
    atomicMax(&scale[1], lo);
  }
}

// GroupTable is the table of value type VT and its family.
template <bool kSigned> struct IntFamilyOf {
  using type = SignedFamily;
};
template <> struct IntFamilyOf<false> {
  using type = UnsignedFamily;
};
template <typename VT> struct GroupTable {
  using Family = typename IntFamilyOf<(VT(-1) < VT(0))>::type;
  using Table = IntTable<VT, Family>;
};
template <> struct GroupTable<float> {
  using Family = FloatFamily;
  using Table = FloatTable<float>;
};
template <> struct GroupTable<double> {
  using Family = FloatFamily;
  using Table = FloatTable<double>;
};

// dynamic_shared is the block's dynamic shared memory.
__device__ __forceinline__ unsigned long long* dynamic_shared() {
#ifdef __CUDACC__
  extern __shared__ unsigned long long arrowagg_group_shared[];
  return arrowagg_group_shared;
#else
  return emu_dynamic_shared();
#endif
}

// merge_partials merges, group by group, the count partials at src,
// src + stride, ... (field w of group j at w * p + j; the group's rows in
// field K) with the family's merge, in an order fixed by count alone, and
// hands each group's state to emit(j, state, rows) (on one lane). S lanes
// merge a group (S a power of two: as many as the block's threads allow,
// up to a warp's; few groups, many lanes each): lane s merges partials s,
// s + S, s + 2S, ... in order, then the S lanes' states merge in a tree
// (lane s takes lane s + off's, off = S/2, ..., 1).
template <class Fam, class Emit>
__device__ __forceinline__ void merge_partials(const uint64_t* src, unsigned count, uint64_t stride, uint64_t p,
                                               Emit emit) {
  constexpr int K = Fam::K;
  unsigned S = 1;
  while (S < kWarpThreads && 2 * S * p <= kBlockThreads) S *= 2;
  const unsigned s = threadIdx.x % S;
  const uint64_t per = kBlockThreads / S;     // groups a pass
  for (uint64_t j0 = 0; j0 < p; j0 += per) {  // uniform: every lane shuffles
    const uint64_t j = j0 + threadIdx.x / S;
    typename Fam::State acc = Fam::identity();
    uint64_t rows = 0;
    if (j < p) {
      for (unsigned i = s; i < count; i += S) {
        const unsigned long long* at = (const unsigned long long*)src + (uint64_t)i * stride + j;
        typename Fam::State st;
#pragma unroll
        for (int w = 0; w < K; w++) st.w[w] = __ldcg(at + w * p);
        Fam::merge(acc, st);
        rows += __ldcg(at + K * p);
      }
    }
    for (unsigned off = S / 2; off > 0; off /= 2) {
      typename Fam::State o;
#pragma unroll
      for (int w = 0; w < K; w++) o.w[w] = __shfl_down_sync(kFullMask, (unsigned long long)acc.w[w], off);
      const uint64_t r = __shfl_down_sync(kFullMask, (unsigned long long)rows, off);
      if (s < off && s + off < count) {  // lane s + off merged at least one partial
        Fam::merge(acc, o);
        rows += r;
      }
    }
    if (j < p && s == 0) emit(j, acc, rows);
  }
}

// group_finish is the device layer: the block's table into its partial
// (field by field: field w of group j at w * window + j); the block's
// cluster's ticket, and in the cluster's last block the merge of the
// cluster's partials into its first block's; the launch's ticket, and in
// the last of those the merge of the clusters' partials into out. Two
// levels of the last-block guard, so that no block merges more than
// max(AGG_GROUP_CLUSTER, clusters) partials: one block merging every
// block's partial was most of a launch's time at a thousand groups.
template <class Fam, class Table>
__device__ __forceinline__ void group_finish(const Table& tab, uint64_t p, unsigned bad, uint64_t* partials,
                                             unsigned int* ticket, uint64_t* out) {
  constexpr int K = Fam::K, W = K + 1;
  __shared__ unsigned block_bad;
  __shared__ bool am_last;
  if (threadIdx.x == 0) block_bad = 0;
  __syncthreads();  // the table is complete
  if (bad != 0) atomicAdd(&block_bad, bad);
  uint64_t* mine = partials + (uint64_t)blockIdx.x * W * p;
  for (uint64_t j = threadIdx.x; j < p; j += kBlockThreads) {
    const typename Fam::State s = tab.state(j);
#pragma unroll
    for (int w = 0; w < K; w++) __stcg((unsigned long long*)mine + w * p + j, (unsigned long long)s.w[w]);
    __stcg((unsigned long long*)mine + K * p + j, (unsigned long long)tab.group_rows(j));
  }
  __threadfence();
  __syncthreads();
  uint64_t* bads = partials + (uint64_t)gridDim.x * W * p;
  const unsigned cluster = blockIdx.x / kGroupCluster, first = cluster * kGroupCluster;
  const unsigned size = tmin((unsigned)kGroupCluster, gridDim.x - first);
  const unsigned clusters = (gridDim.x + kGroupCluster - 1) / kGroupCluster;
  if (threadIdx.x == 0) {
    __stcg((unsigned long long*)bads + blockIdx.x, (unsigned long long)block_bad);
    __threadfence();
    am_last = atomicAdd(&ticket[1 + cluster], 1u) == size - 1;
  }
  __syncthreads();
  if (!am_last) return;
  __threadfence();
  // The cluster's last block: its partials, merged into its first block's
  // (each lane reads its group's fields of every partial before its group's
  // lane 0 writes them).
  uint64_t* slot = partials + (uint64_t)first * W * p;
  merge_partials<Fam>(slot, size, W * p, p, [&](uint64_t j, const typename Fam::State& acc, uint64_t rows) {
#pragma unroll
    for (int w = 0; w < K; w++) __stcg((unsigned long long*)slot + w * p + j, (unsigned long long)acc.w[w]);
    __stcg((unsigned long long*)slot + K * p + j, (unsigned long long)rows);
  });
  __threadfence();
  __syncthreads();  // the cluster's partial is written, am_last read
  if (threadIdx.x == 0) {
    *(volatile unsigned int*)&ticket[1 + cluster] = 0;
    __threadfence();
    am_last = atomicAdd(ticket, 1u) == clusters - 1;
  }
  __syncthreads();
  if (!am_last) return;
  __threadfence();
  merge_partials<Fam>(partials, clusters, (uint64_t)kGroupCluster * W * p, p,
                      [&](uint64_t j, const typename Fam::State& acc, uint64_t rows) {
                        Words<W> o;
#pragma unroll
                        for (int w = 0; w < K; w++) o.w[w] = acc.w[w];
                        o.w[K] = rows;
                        store_state<W>(out + j * W, o);
                      });
  if (threadIdx.x == 0) {
    uint64_t total = 0;
    for (unsigned b = 0; b < gridDim.x; b++) total += __ldcg((const unsigned long long*)bads + b);
    __stcg((unsigned long long*)out + p * W, (unsigned long long)total);
    *(volatile unsigned int*)ticket = 0;
  }
}

// group_table_grid is the body of a grouped kernel with table tab: the
// block's tiles into its table, then the device layer.
template <class Fam, class Table>
__device__ __forceinline__ void group_table_grid(Table& tab, const GroupIn& in, uint64_t* partials,
                                                 unsigned int* ticket, uint64_t* out) {
  tab.init(in.window);
  __syncthreads();
  unsigned bad = 0;
  for (uint64_t base = (uint64_t)blockIdx.x * kGroupTile; base < in.n; base += (uint64_t)gridDim.x * kGroupTile)
    tab.fold(in, base, bad);
  tab.settle();
  group_finish<Fam>(tab, in.window, bad, partials, ticket, out);
}

// GroupGrid runs a grouped kernel's block for value type VT with its
// table: integers' IntTable; floats' FloatWarpTable for a window of few
// groups (a uniform branch: the launch's window), FloatTable otherwise.
template <typename VT> struct GroupGrid {
  __device__ static void run(const GroupIn& in, uint64_t* partials, unsigned int* ticket, uint64_t* out) {
    typename GroupTable<VT>::Table tab(dynamic_shared(), in.window, in.vvalid == nullptr);
    group_table_grid<typename GroupTable<VT>::Family>(tab, in, partials, ticket, out);
  }
};
template <typename VT> struct FloatGroupGrid {
  __device__ static void run(const GroupIn& in, uint64_t* partials, unsigned int* ticket, uint64_t* out) {
    if (in.window <= AGG_GROUP_FLOAT_WARP_GROUPS) {
      FloatWarpTable<VT> tab(dynamic_shared(), in.window);
      group_table_grid<FloatFamily>(tab, in, partials, ticket, out);
      return;
    }
    FloatTable<VT> tab(dynamic_shared(), in.window);
    group_table_grid<FloatFamily>(tab, in, partials, ticket, out);
  }
};
template <> struct GroupGrid<float> : FloatGroupGrid<float> {};
template <> struct GroupGrid<double> : FloatGroupGrid<double> {};

// group_grid is the body of a grouped kernel for value type VT.
template <typename VT>
__device__ __forceinline__ void group_grid(const GroupIn& in, uint64_t* partials, unsigned int* ticket,
                                           uint64_t* out) {
  GroupGrid<VT>::run(in, partials, ticket, out);
}

// The wide grouped kernels (arrowagg_group_wide_<integer kind>): a domain
// of more groups than a block's shared memory holds (more than
// AGG_GROUP_MAX keys, up to AGG_GROUP_WIDE_MAX: a GROUP BY of many keys)
// is folded into one table in device memory by global atomics, in one
// launch over the rows. Integer values only: their fields' additions,
// minima and maxima commute, so the table does not depend on the order of
// the atomics; a float sum does (floats of such domains are grouped on the
// CPU). The rows, keys, selection and groups are the grouped kernels' (a
// launch's window is the whole domain: g0 0, window groups + 1).
//
// Layers: thread  block b takes tiles b, b + gridDim.x, ... (GroupRows:
//                 coalesced loads of keys, values and bitmaps), each row
//                 folded into its group's entry with global atomics (no
//                 block or warp table: with many groups the rows of a tile
//                 rarely share one);
//         device  the table in device memory (L2 holds the entries of
//                 about a million groups), the one result; no last block:
//                 the launch's end is the fold's.
//
// The table, zeroed by the host before the launch, D = groups + 1 entries
// field by field (AGG_GROUP_WIDE_ENTRY_BYTES a group), then one word:
//   lo[D]    the sum of the values' 64-bit words, modulo 2^64 (a value's
//            atomic returns the sum before it: whether it wrapped);
//   hi[D]    2^32 rows + wraps: the group's selected rows in the high 32
//            bits, and in the low 32 (signed) the wraps of lo less the
//            negative values, so that the sum is lo + 2^64 wraps (exact
//            for the AGG_GROUP_WIDE_ROWS rows a launch may fold: |wraps|
//            is at most the rows); one atomic a row counts the row and
//            its wrap together;
//   ext[2D]  group g's {~min key, max key} at 2g, 2g+1: order keys (the
//            value's bits, the sign bit flipped for a signed kind), both
//            raised by atomicMax, so that zero is the identity of both;
//   cnt[D]   its valid values (32-bit; 0 when the values have no nulls:
//            their count is then the rows), then D 32-bit words unused;
//   bad      the selected rows whose non-null key lay outside the domain.
// flags: bit 0 the sums are wanted, bit 1 the extremes (the fields not
// wanted stay zero, and cost no atomics; the rows are always counted).

constexpr unsigned kWideSum = 1, kWideExtremes = 2;
static_assert(AGG_GROUP_WIDE_ENTRY_BYTES == 4 * 8 + 2 * 4, "a wide entry: lo, hi, ext (2), cnt, unused");
static_assert(AGG_GROUP_WIDE_MAX < kGroupNullValue, "a wide group is an int (group_of)");
static_assert((unsigned long long)AGG_GROUP_WIDE_ROWS < (1ull << 31),
              "a launch's rows fit the 32-bit counters, and its wraps hi's signed low half");

// load_pair reads the two 64-bit words at p (16-byte aligned) from L2, in
// one load on the device.
__device__ __forceinline__ void load_pair(const unsigned long long* p, unsigned long long& a, unsigned long long& b) {
#ifdef __CUDACC__
  const ulonglong2 v = __ldcg(reinterpret_cast<const ulonglong2*>(p));
  a = v.x, b = v.y;
#else
  a = __ldcg(p), b = __ldcg(p + 1);
#endif
}

// WideTable is a wide kernel's table in device memory (above).
template <typename VT> struct WideTable {
  static constexpr bool kSigned = VT(-1) < VT(0);
  unsigned long long *lo, *hi, *ext, *bad;
  unsigned* cnt;
  bool all_valid, sum, extremes;

  __device__ WideTable(uint64_t* t, uint64_t d, bool all_valid_, unsigned flags)
      : lo((unsigned long long*)t),
        hi(lo + d),
        ext(hi + d),
        bad(ext + 3 * d),  // after ext and the counts
        cnt((unsigned*)(ext + 2 * d)),
        all_valid(all_valid_),
        sum(flags & kWideSum),
        extremes(flags & kWideExtremes) {}

  // add folds a row into group g: its value into lo (the atomic's old sum
  // says whether it wrapped), then the row and the wrap (less one for a
  // negative value) into hi in one atomic. The extremes are read first,
  // and atomicMax runs only where x would raise one (a stale read is never
  // above a key: keys only rise, so a skipped x could not have raised it).
  __device__ __forceinline__ void add(uint64_t g, VT x, bool ok) {
    unsigned long long row = 1ull << 32;
    const unsigned long long u = widen_bits(x);
    if (ok && sum && u != 0) {
      const unsigned long long old = atomicAdd(&lo[g], u);
      const long long wrap = (long long)(old + u < old) - (kSigned && x < VT(0) ? 1 : 0);
      row += (unsigned long long)wrap;
    }
    atomicAdd(&hi[g], row);
    if (!ok) return;
    if (!all_valid) atomicAdd(&cnt[g], 1u);
    if (extremes) {
      const unsigned long long k = kSigned ? u ^ (1ull << 63) : u;
      unsigned long long nmn, mx;
      load_pair(&ext[2 * g], nmn, mx);
      if (~k > nmn) atomicMax(&ext[2 * g], ~k);
      if (k > mx) atomicMax(&ext[2 * g + 1], k);
    }
  }
};

// group_wide is the body of a wide grouped kernel for value type VT.
template <typename VT>
__device__ __forceinline__ void group_wide(const GroupIn& in, unsigned flags, uint64_t* table) {
  WideTable<VT> tab(table, in.groups + 1, in.vvalid == nullptr, flags);
  unsigned bad = 0;
  for (uint64_t base = (uint64_t)blockIdx.x * kGroupTile; base < in.n; base += (uint64_t)gridDim.x * kGroupTile) {
    GroupRows<VT> rs;
    rs.template load<false>(in, base, bad);
#pragma unroll
    for (int i = 0; i < kGroupItems; i++)
      if (rs.g[i] != kGroupSkip) tab.add((uint64_t)rs.g[i], rs.x[i], rs.ok[i]);
  }
  if (bad != 0) atomicAdd(tab.bad, (unsigned long long)bad);
}

}  // namespace arrowagg

// ARROWAGG_GROUP_INTEGERS lists the integer value kinds, ARROWAGG_GROUP_VALUES
// every value kind: a kernel arrowagg_group_<kind> each, and one
// arrowagg_group_wide_<kind> each integer kind.
#define ARROWAGG_GROUP_INTEGERS(X) \
  X(int8, int8_t)                  \
  X(int16, int16_t)                \
  X(int32, int32_t)                \
  X(int64, int64_t)                \
  X(uint8, uint8_t)                \
  X(uint16, uint16_t)              \
  X(uint32, uint32_t)              \
  X(uint64, uint64_t)
#define ARROWAGG_GROUP_VALUES(X) \
  ARROWAGG_GROUP_INTEGERS(X)     \
  X(float32, float)              \
  X(float64, double)

// ARROWAGG_GROUP_ROWS are the grouped kernels' parameters up to the rows,
// ARROWAGG_GROUP_IN(g0, window) their GroupIn (the keys are integers:
// int8 ... uint64).
#define ARROWAGG_GROUP_ROWS                                                                                   \
  const void *keys, unsigned long long koff, const uint32_t *kvalid, unsigned long long kbit,                \
      unsigned long long kkind, unsigned long long kmin, unsigned long long groups, const void *values,      \
      unsigned long long voff, const uint32_t *vvalid, unsigned long long vbit, const uint32_t *sel,         \
      unsigned long long sbit, const uint32_t *selv, unsigned long long svbit, unsigned long long n
#define ARROWAGG_GROUP_IN(g0, window)                                                                        \
  GroupIn {                                                                                                  \
    keys, koff, kvalid, kbit, kmin, groups, values, voff, vvalid, vbit, sel, sbit, selv, svbit, n, g0, window, \
        1u << (kkind & 3), kkind <= kKind_int64                                                              \
  }

#define ARROWAGG_GROUP_KERNEL(name, VT)                                                                  \
  extern "C" __global__ void __launch_bounds__(kBlockThreads, 4)                                         \
      arrowagg_group_##name(ARROWAGG_GROUP_ROWS, unsigned long long g0, unsigned long long window,        \
                            uint64_t* partials, unsigned int* ticket, uint64_t* out) {                    \
    if (kkind > kKind_uint64) return;                                                                    \
    group_grid<VT>(ARROWAGG_GROUP_IN(g0, window), partials, ticket, out);                                \
  }
ARROWAGG_GROUP_VALUES(ARROWAGG_GROUP_KERNEL)

// The float kernels with a table per thread (FloatThreadTable): the
// grouped kernels' parameters; registers for four blocks a multiprocessor
// (the tables of up to 12 groups leave room for them).
#define ARROWAGG_GROUP_THREADS_KERNEL(name, VT)                                                           \
  extern "C" __global__ void __launch_bounds__(kBlockThreads, 4)                                         \
      arrowagg_group_threads_##name(ARROWAGG_GROUP_ROWS, unsigned long long g0, unsigned long long window, \
                                    uint64_t* partials, unsigned int* ticket, uint64_t* out) {            \
    if (kkind > kKind_uint64) return;                                                                    \
    FloatThreadTable<VT> tab(dynamic_shared(), window);                                                  \
    group_table_grid<FloatFamily>(tab, ARROWAGG_GROUP_IN(g0, window), partials, ticket, out);            \
  }
ARROWAGG_GROUP_THREADS_KERNEL(float32, float)
ARROWAGG_GROUP_THREADS_KERNEL(float64, double)

// The exact float kernels (FloatExactTable): the grouped kernels'
// parameters, then the launch's scale words (from the scale kernel of the
// value column, arrowagg_float_scale_<kind>: two 32-bit words the host
// zeroes first) and its lost word (raised when the scale does not fit its
// limbs: the launch folded nothing). Registers for four blocks a
// multiprocessor.
#define ARROWAGG_GROUP_EXACT_KERNEL(name, VT)                                                              \
  extern "C" __global__ void __launch_bounds__(kBlockThreads, 4)                                         \
      arrowagg_group_exact_##name(ARROWAGG_GROUP_ROWS, unsigned long long g0, unsigned long long window,   \
                                  uint64_t* partials, unsigned int* ticket, uint64_t* out,                 \
                                  const unsigned int* scale, unsigned int* lost) {                         \
    if (kkind > kKind_uint64) return;                                                                    \
    FloatExactTable<VT> tab(dynamic_shared(), window, scale, lost);                                      \
    group_table_grid<FloatFamily>(tab, ARROWAGG_GROUP_IN(g0, window), partials, ticket, out);            \
  }                                                                                                      \
  extern "C" __global__ void __launch_bounds__(kBlockThreads)                                            \
      arrowagg_float_scale_##name(const void* values, unsigned long long voff, const uint32_t* vvalid,     \
                                  unsigned long long vbit, unsigned long long n, unsigned int* scale) {    \
    float_scale<VT>(static_cast<const VT*>(values), voff, vvalid, vbit, n, scale);                       \
  }
ARROWAGG_GROUP_EXACT_KERNEL(float32, float)
ARROWAGG_GROUP_EXACT_KERNEL(float64, double)

// The wide kernels: parameters as the grouped kernels' up to n, then flags
// (kWideSum, kWideExtremes) and the table (above); four blocks a
// multiprocessor (64 registers), as the other grouped kernels.
#define ARROWAGG_GROUP_WIDE_KERNEL(name, VT)                                                             \
  extern "C" __global__ void __launch_bounds__(kBlockThreads, 4)                                         \
      arrowagg_group_wide_##name(ARROWAGG_GROUP_ROWS, unsigned long long flags, uint64_t* table) {        \
    if (kkind > kKind_uint64) return;                                                                    \
    group_wide<VT>(ARROWAGG_GROUP_IN(0, groups + 1), (unsigned)flags, table);                            \
  }
ARROWAGG_GROUP_INTEGERS(ARROWAGG_GROUP_WIDE_KERNEL)
