package hollow

import (
	"slices"
	"testing"
)

func TestShardOf(t *testing.T) {
	names := []string{"c3", "c1", "c4", "c0", "c2"}
	for _, tc := range []struct {
		shard, shards int
		want          []string
	}{
		{0, 0, []string{"c0", "c1", "c2", "c3", "c4"}},
		{0, 1, []string{"c0", "c1", "c2", "c3", "c4"}},
		{0, 2, []string{"c0", "c2", "c4"}},
		{1, 2, []string{"c1", "c3"}},
		{2, 3, []string{"c2"}},
	} {
		if got := ShardOf(names, tc.shard, tc.shards); !slices.Equal(got, tc.want) {
			t.Errorf("ShardOf(%v, %d, %d) = %v, want %v", names, tc.shard, tc.shards, got, tc.want)
		}
	}
	// Every name is in exactly one shard.
	var all []string
	for i := range 3 {
		all = append(all, ShardOf(names, i, 3)...)
	}
	if slices.Sort(all); !slices.Equal(all, []string{"c0", "c1", "c2", "c3", "c4"}) {
		t.Errorf("the shards of 3 hold %v, want every name once", all)
	}
	if !slices.Equal(names, []string{"c3", "c1", "c4", "c0", "c2"}) {
		t.Errorf("ShardOf changed its argument: %v", names)
	}
}

func TestOptionsCheck(t *testing.T) {
	for _, tc := range []struct {
		shard, shards int
		ok            bool
	}{
		{0, 0, true}, {0, 1, true}, {3, 4, true},
		{4, 4, false}, {-1, 2, false}, {0, -1, false}, {1, 1, false},
	} {
		err := Options{Shard: tc.shard, Shards: tc.shards}.check()
		if (err == nil) != tc.ok {
			t.Errorf("shard %d of %d: error %v, want ok=%v", tc.shard, tc.shards, err, tc.ok)
		}
	}
}
