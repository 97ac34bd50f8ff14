package structfill

import (
	"reflect"
	"strings"
	"testing"
)

type inner struct {
	Name string
	On   bool
}

type outer struct {
	S    string
	I    int
	I64  int64
	B    bool
	IDs  []int64
	In   inner
	List []inner
}

func TestFill(t *testing.T) {
	words := []string{"abcd", "", "xyz"}
	k := 0
	next := func() string { k++; return words[(k-1)%len(words)] }
	var got outer
	Fill(reflect.ValueOf(&got).Elem(), 2, next)
	want := outer{S: "abcd", I: -3, I64: 0, B: true, IDs: []int64{-7, 993},
		In:   inner{Name: "", On: false},
		List: []inner{{Name: "abcd", On: true}, {Name: "xyz", On: true}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	var empty outer
	Fill(reflect.ValueOf(&empty).Elem(), 0, func() string { return "x" })
	if empty.IDs == nil || len(empty.IDs) != 0 || len(empty.List) != 0 {
		t.Errorf("n = 0: %+v", empty)
	}
}

func TestFillPanicsOnUnknownKind(t *testing.T) {
	defer func() {
		if msg, _ := recover().(string); !strings.Contains(msg, "field F of structfill.odd is a float64") {
			t.Errorf("panic %q", msg)
		}
	}()
	var o odd
	Fill(reflect.ValueOf(&o).Elem(), 1, func() string { return "" })
}

type odd struct{ F float64 }
