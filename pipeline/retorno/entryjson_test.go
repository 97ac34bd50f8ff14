package retorno

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"remessa/internal/structfill"
)

// TestAppendEntry: appendEntry writes what json.Marshal writes of any
// Entry (every field set by reflection but the motivos, so a field added to Entry and not
// to appendEntry fails here; zero fields left out as omitempty says;
// strings with escapes and non-ASCII text), and json.Unmarshal reads it
// back to the same Entry.
func TestAppendEntry(t *testing.T) {
	words := []string{"", "a", "José da Silva", `aspas "e" \barra`, "<b>&</b>", "linha\nnova", "2027-03-10", "\u2028 \x01", "\xff"}
	rng := rand.New(rand.NewPCG(7, 8))
	for n := range 3 {
		for range 300 {
			var e Entry
			// structfill fills no list of strings: Motivos by hand, n of them
			structfill.Fill(reflect.ValueOf(&e).Elem(), 0, func() string { return words[rng.IntN(len(words))] })
			for range n {
				e.Motivos = append(e.Motivos, words[rng.IntN(len(words))])
			}
			want, err := json.Marshal(&e)
			if err != nil {
				t.Fatal(err)
			}
			got := appendEntry([]byte("x"), &e)
			if string(got[1:]) != string(want) {
				t.Fatalf("appendEntry:\n got %s\nwant %s", got[1:], want)
			}
			var back Entry
			if err := json.Unmarshal(got[1:], &back); err != nil {
				t.Fatal(err)
			}
			var ref Entry
			json.Unmarshal(want, &ref)
			if !reflect.DeepEqual(back, ref) {
				t.Fatalf("read back %+v, want %+v", back, ref)
			}
		}
	}
}
