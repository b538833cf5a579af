package bakeapi

import "testing"

func TestWorkflowIDs(t *testing.T) {
	if got := SplitWorkflowID("b1", "my-split"); got != "bake/b1/split/my-split" {
		t.Fatal(got)
	}
	if id, ok := BakeIDFromWorkflowID(BakeWorkflowID("b1")); !ok || id != "b1" {
		t.Fatal(id, ok)
	}
	if _, ok := BakeIDFromWorkflowID(SplitWorkflowID("b1", "x")); ok {
		t.Fatal("a split workflow ID parsed as a bake ID")
	}
}

// whestbench's floor arithmetic spreads the remainder (_parse_mlp_range_cli,
// https://github.com/AIcrowd/whestbench/blob/main/src/whestbench/cli.py): n=10,
// N=4.
func TestSliceRangeSpreadsRemainder(t *testing.T) {
	want := []Range{{0, 2}, {2, 5}, {5, 7}, {7, 10}}
	for k, w := range want {
		got, err := SliceRange(k, 4, 10)
		if err != nil || got != w {
			t.Errorf("slice %d/4 of 10 = %v, %v; want %v", k, got, err, w)
		}
	}
	if r, _ := SliceRange(1, 4, 1000); r != (Range{250, 500}) {
		t.Errorf("1/4 of 1000 = %v", r)
	}
}
