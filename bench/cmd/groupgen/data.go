package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/arrowagg/arrowagg/bench/internal/gen"
)

// The data. Of N rows, row i (0 <= i < N) holds:
//
// Keys: key column c takes p_c(i) mod D_c, where p_c(i) = (A_c*i + B_c) mod N
// is a permutation of [0, N) (a Weyl sequence: A_c is the integer nearest
// N times an irrational fraction of its own, raised to the first one prime
// to N; B_c = gen.Mix(c) mod N). Every value of [0, min(D_c, N)) appears,
// each floor(N/D_c) or ceil(N/D_c) times, scattered over the file. s1k is
// "s" and the three digits of its key.
//
// Values: row i draws r_j = gen.Mix(4i + j) for j = 0..3, and
//
//	i32 = null when (r_0 & 0xffff) < 3277 (5%), else int64(r_0 >> 32) - 2^31
//	i64 = null when (r_1 & 0xffff) < 3277, else int64(r_1 >> 27) - 2^36
//	      (|i64| <= 2^36: sums of 10^8 rows fit int64)
//	f64 = null when (r_2 & 0xffff) < 3277, else float64(r_2 >> 11) / 2^43
//	      (in [0, 1024), exact: no rounding can make two readers differ;
//	      never negative, so that sums in another order stay within a
//	      relative 1e-9)
//	sel = r_3 mod 100
//
// DuckDB computes gen.Mix with UHUGEINT products reduced mod 2^64, a step
// per subquery (selectSQL); the test holds its rows to row's.

// keySpec is a key column: its name, its number of distinct values for N
// rows, and the fraction of N its multiplier is nearest.
type keySpec struct {
	name     string
	distinct func(n int64) int64
	frac     float64
	str      bool // s1k: "s%03d"
}

var keySpecs = []keySpec{
	{"k10", func(int64) int64 { return 10 }, math.Phi - 1, false},
	{"k1k", func(int64) int64 { return 1000 }, math.Sqrt2 - 1, false},
	{"k1m", func(int64) int64 { return 1_000_000 }, math.Sqrt(3) - 1, false},
	{"k50m", func(n int64) int64 { return max(min(50_000_000, n/2), 1) }, math.Sqrt(5) - 2, false},
	{"s1k", func(int64) int64 { return 1000 }, math.E - 2, true},
}

// maxRows keeps A_c*i below 2^63 (A_c < N, i < N).
const maxRows = 3_000_000_000

// weyl is a key column's permutation and modulus for n rows.
type weyl struct{ a, b, n, d int64 }

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func keyWeyl(c int, n int64) weyl {
	k := keySpecs[c]
	a := max(int64(math.Round(float64(n)*k.frac)), 1)
	for gcd(a, n) != 1 {
		a++
	}
	return weyl{a: a, b: int64(gen.Mix(uint64(c)) % uint64(n)), n: n, d: k.distinct(n)}
}

func (w weyl) key(i int64) int64 { return (w.a*i + w.b) % w.n % w.d }

// nullBelow: a value is null when the low 16 bits of its draw are below it.
const nullBelow = 3277

// row is one row of the data, as Go computes it (the test's oracle).
type row struct {
	keys              [4]int64
	s1k               string
	i32               int32
	i64               int64
	f64               float64
	i32ok, i64ok, fok bool
	sel               int32
}

func makeRow(i, n int64) row {
	var r row
	for c := range 4 {
		r.keys[c] = keyWeyl(c, n).key(i)
	}
	r.s1k = fmt.Sprintf("s%03d", keyWeyl(4, n).key(i))
	u := uint64(i)
	r0, r1, r2, r3 := gen.Mix(4*u), gen.Mix(4*u+1), gen.Mix(4*u+2), gen.Mix(4*u+3)
	r.i32ok, r.i32 = r0&0xffff >= nullBelow, int32(int64(r0>>32)-1<<31)
	r.i64ok, r.i64 = r1&0xffff >= nullBelow, int64(r1>>27)-1<<36
	r.fok, r.f64 = r2&0xffff >= nullBelow, float64(r2>>11)/(1<<43)
	r.sel = int32(r3 % 100)
	return r
}

// selectSQL is the SELECT of n rows.
func selectSQL(n int64) (string, error) {
	if n <= 0 || n > maxRows {
		return "", fmt.Errorf("-rows %d: want 1 to %d", n, int64(maxRows))
	}
	const (
		mask64 = "18446744073709551615::UHUGEINT"
		c0     = "11400714819323198485::UHUGEINT" // 0x9e3779b97f4a7c15
		c1     = "13787848793156543929::UHUGEINT" // 0xbf58476d1ce4e5b9
		c2     = "10723151780598845931::UHUGEINT" // 0x94d049bb133111eb
	)
	// gen.Mix of 4i+j in four steps, r_j after the last.
	step := func(cols func(j int) string) string {
		var b strings.Builder
		b.WriteString("i")
		for j := range 4 {
			fmt.Fprintf(&b, ", %s AS r%d", cols(j), j)
		}
		return b.String()
	}
	q := "SELECT " + step(func(j int) string {
		return fmt.Sprintf("((4 * range + %d)::UHUGEINT + %s) & %s", j, c0, mask64)
	}) + " FROM (SELECT range, range AS i FROM range(" + fmt.Sprint(n) + "))"
	for _, s := range []struct {
		shift int
		mul   string
	}{{30, c1}, {27, c2}} {
		q = "SELECT " + step(func(j int) string {
			return fmt.Sprintf("(xor(r%d, r%d >> %d)::UHUGEINT * %s) & %s", j, j, s.shift, s.mul, mask64)
		}) + " FROM (" + q + ")"
	}
	q = "SELECT " + step(func(j int) string {
		return fmt.Sprintf("xor(r%d, r%d >> 31)::UBIGINT", j, j)
	}) + " FROM (" + q + ")"

	var b strings.Builder
	b.WriteString("SELECT ")
	for c, k := range keySpecs {
		w := keyWeyl(c, n)
		e := fmt.Sprintf("(%d * i + %d) %% %d %% %d", w.a, w.b, w.n, w.d)
		if k.str {
			e = fmt.Sprintf("printf('s%%03d', %s)", e)
		} else {
			e = fmt.Sprintf("(%s)::BIGINT", e)
		}
		fmt.Fprintf(&b, "%s AS %s, ", e, k.name)
	}
	null := func(j int) string { return fmt.Sprintf("CASE WHEN (r%d & 65535) < %d THEN NULL ELSE ", j, nullBelow) }
	fmt.Fprintf(&b, "%s((r0 >> 32)::BIGINT - 2147483648)::INTEGER END AS i32, ", null(0))
	fmt.Fprintf(&b, "%s(r1 >> 27)::BIGINT - 68719476736 END AS i64, ", null(1))
	fmt.Fprintf(&b, "%s(r2 >> 11)::DOUBLE / 8796093022208.0 END AS f64, ", null(2))
	b.WriteString("(r3 % 100)::INTEGER AS sel FROM (" + q + ")")
	return b.String(), nil
}

func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
