package eventlog

import (
	"slices"
	"strconv"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// A group's lists of members share the room NewGroup makes for them: a
// group growing past it, and members leaving and joining, must keep every
// list intact (creation order for all, join order for mems).
func TestGroupListsKeepTheirMembers(t *testing.T) {
	w, g := sixPartitionGroup(t, GroupConfig{Name: "g"})
	var made []string
	var m1 *Member
	for i := range 2*groupFirst + 1 {
		name := "m" + strconv.Itoa(i)
		m, err := NewMember(w, g, MemberConfig{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			m1 = m
		}
		made = append(made, name)
		if i == groupFirst-1 {
			m1.Leave() // a hole in mems while all still has room
		}
	}
	if err := m1.Rejoin(); err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, m := range g.all {
		all = append(all, m.cfg.Name)
	}
	if !slices.Equal(all, made) {
		t.Errorf("all = %v, want %v in creation order", all, made)
	}
	var in []string
	for _, m := range g.mems {
		in = append(in, m.cfg.Name)
	}
	want := append(slices.Delete(slices.Clone(made), 1, 2), "m1")
	if !slices.Equal(in, want) {
		t.Errorf("mems = %v, want %v in join order", in, want)
	}
	if got := g.Members(); len(got) != len(made) {
		t.Errorf("Members() = %v, want %d", got, len(made))
	}
}

// A group of up to groupFirst members appends to its lists without
// allocating for them.
func TestGroupListsRoom(t *testing.T) {
	w, g := sixPartitionGroup(t, GroupConfig{Name: "g"})
	all, mems, names := cap(g.all), cap(g.mems), cap(g.names)
	for i := range groupFirst {
		if _, err := NewMember(w, g, MemberConfig{Name: "m" + strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if cap(g.all) != all || cap(g.mems) != mems || cap(g.names) != names || all < groupFirst || mems < groupFirst || names < groupFirst {
		t.Errorf("caps all %d→%d, mems %d→%d, names %d→%d after %d joins: the lists grew", all, cap(g.all), mems, cap(g.mems), names, cap(g.names), groupFirst)
	}
}

// sixPartitionGroup returns a world with a 6-partition log "orders" and
// an empty group on it made with cfg.
func sixPartitionGroup(t *testing.T, cfg GroupConfig) (*sim.World, *Group) {
	t.Helper()
	w, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(w, Config{Name: "orders", Partitions: 6})
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGroup(w, l, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w, g
}
