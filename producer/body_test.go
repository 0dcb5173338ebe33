package producer

import (
	"math"
	"strconv"
	"testing"
)

// TestDefaultBody checks the default bodies against strconv across carries
// and jumps, and that bodies cut from one block do not share capacity.
func TestDefaultBody(t *testing.T) {
	p := &Producer{prefix: "shop#"}
	check := func(i int) {
		t.Helper()
		if got, want := string(p.defaultBody(i)), "shop#"+strconv.Itoa(i+1); got != want {
			t.Fatalf("body %d = %q, want %q", i, got, want)
		}
	}
	for i := 0; i < 12_000; i++ {
		check(i)
	}
	for _, i := range []int{99_999, 100_000, 5, -1, 0, -10, 999} {
		check(i)
	}
	bodies := [][]byte{p.defaultBody(7), p.defaultBody(8)}
	bodies[0] = append(bodies[0], 'x')
	if string(bodies[1]) != "shop#9" {
		t.Fatalf("appending to one body changed the next: %q", bodies[1])
	}
	long := &Producer{prefix: string(make([]byte, 2*bodyArena)) + "#"}
	if got := long.defaultBody(0); len(got) != 2*bodyArena+2 {
		t.Fatalf("a name longer than the block: %d bytes", len(got))
	}
}

// TestDefaultBodyBlocksGrow checks that a small run does not pay for a
// block sized for a long one: the first block is small, each next one
// twice the last, up to bodyArena.
func TestDefaultBodyBlocksGrow(t *testing.T) {
	p := &Producer{prefix: "shop#"}
	var blocks int
	var made []int
	last := -1
	for i := 0; i < 100; i++ {
		p.defaultBody(i)
		if c := cap(p.bodies); c != last {
			blocks++
			made = append(made, c)
			last = c
		}
	}
	total := 0
	for _, c := range made {
		total += c
	}
	if total > 4<<10 {
		t.Fatalf("100 bodies of about 8 bytes took blocks of %v bytes (%d in all), want at most 4 KiB", made, total)
	}
	for i := 100; i < 100_000; i++ {
		p.defaultBody(i)
		if c := cap(p.bodies); c > bodyArena {
			t.Fatalf("body %d: a block of %d bytes, more than bodyArena (%d)", i, c, bodyArena)
		}
	}
	if c := cap(p.bodies); c != bodyArena {
		t.Fatalf("after 100,000 bodies the block holds %d bytes, want bodyArena (%d)", c, bodyArena)
	}
}

// TestDefaultBodiesFillTheirBlocks checks that a long run's bodies take
// their own length of a block and nothing more: the blocks allocated for
// a stretch of bodies hold those bodies' bytes with at most one body's
// worth of waste at the end of each block.
func TestDefaultBodiesFillTheirBlocks(t *testing.T) {
	p := &Producer{prefix: "shop#"}
	for i := range 100_000 { // past the growing blocks
		p.defaultBody(i)
	}
	var blocks, bytes int
	last := &p.bodies[:1][0]
	for i := 100_000; i < 400_000; i++ {
		bytes += len(p.defaultBody(i))
		if b := &p.bodies[:1][0]; b != last {
			blocks++
			last = b
		}
	}
	if want := bytes / bodyArena; blocks > want+1 || blocks*bodyArena > bytes+blocks*len("shop#400000") {
		t.Fatalf("%d bytes of bodies took %d blocks of %d bytes, want about %d", bytes, blocks, bodyArena, want)
	}
}

// TestDefaultBodiesOfAShortRunShareOneBlock checks that a producer that
// knows its count cuts every default body of a short run from one block
// of exactly the bytes they need.
func TestDefaultBodiesOfAShortRunShareOneBlock(t *testing.T) {
	p := &Producer{prefix: "shop#", cfg: Config{Count: 100}}
	first := p.defaultBody(0)
	for i := 1; i < 100; i++ {
		if got, want := string(p.defaultBody(i)), "shop#"+strconv.Itoa(i+1); got != want {
			t.Fatalf("body %d: %q, want %q", i, got, want)
		}
	}
	if c := cap(p.bodies); c > len(p.bodies) || &p.bodies[:1][0] != &first[:1][0] {
		t.Fatalf("100 bodies took more than one block (the last holds %d bytes)", c)
	}
}

// TestKeysAreMadeInBlocks checks that memoised keys read as pattern makes
// them whatever order they are asked in, across block boundaries and for
// a pattern without a number, and that a block of keys costs one
// allocation.
func TestKeysAreMadeInBlocks(t *testing.T) {
	for _, pattern := range []string{"k%d-x", "order-%d", "fixed"} {
		p := &Producer{nkeys: 2*keyBlock + 5, cfg: Config{KeyPattern: pattern}}
		for i := 3 * p.nkeys; i >= 0; i -= 7 {
			if got, want := p.key(i), p.pattern(i%p.nkeys); got != want {
				t.Fatalf("%s: key %d is %q, want %q", pattern, i, got, want)
			}
		}
	}
	allocs := testing.AllocsPerRun(10, func() {
		p := &Producer{nkeys: keyBlock, cfg: Config{KeyPattern: "order-%d"}}
		for i := range keyBlock {
			p.key(i)
		}
	})
	if allocs > 2 { // the memo and one block
		t.Errorf("%d keys took %v allocations, want 2", keyBlock, allocs)
	}
}

// TestDigitsIn checks digitsIn against the lengths of the numbers.
func TestDigitsIn(t *testing.T) {
	for _, r := range [][2]int{{1, 0}, {1, 1}, {1, 9}, {1, 10}, {5, 100}, {99, 1001}, {1, 12345}, {10000, 10000}} {
		want := 0
		for k := r[0]; k <= r[1]; k++ {
			want += len(strconv.Itoa(k))
		}
		if got := digitsIn(r[0], r[1]); got != want {
			t.Errorf("digitsIn(%d, %d) = %d, want %d", r[0], r[1], got, want)
		}
	}
	if got, want := digitsIn(math.MaxInt-9, math.MaxInt), 10*len(strconv.Itoa(math.MaxInt)); got != want {
		t.Errorf("digitsIn(MaxInt-9, MaxInt) = %d, want %d", got, want)
	}
}

// TestCounter checks the digits of a counting run against strconv: every
// carry up to a new digit, jumps back and forth, zero and negative
// numbers, and the largest int.
func TestCounter(t *testing.T) {
	var c counter
	check := func(v int) {
		t.Helper()
		if got, want := string(c.digits(v)), strconv.Itoa(v); got != want {
			t.Fatalf("digits(%d) = %q, want %q (after %d)", v, got, want, c.n)
		}
	}
	for v := 1; v <= 100_100; v++ {
		check(v)
	}
	for _, v := range []int{5, 6, 999, 1000, -1, 0, 1, 2, -10, -9, -8, 9, 10, 99_999_999, 100_000_000, 100_000_001,
		math.MaxInt - 1, math.MaxInt, 1_999, 2_000} {
		check(v)
	}
}
