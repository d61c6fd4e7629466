package trace

import (
	"strconv"
	"strings"
	"testing"
)

// A Dict keeps strings up to MaxDictText bytes and MaxDictStrings strings,
// and a kernel's first MaxKernelTags distinct tags; what it does not keep
// is counted, and its names read as placeholders.
func TestDictBounds(t *testing.T) {
	defer func(text int64, n, tags int) { MaxDictText, MaxDictStrings, MaxKernelTags = text, n, tags }(MaxDictText, MaxDictStrings, MaxKernelTags)
	MaxDictText, MaxDictStrings, MaxKernelTags = 100, 4, 2
	var d Dict
	str := func(id uint64, text string) {
		d.add(&Def{Kind: DefString, Args: [MaxArgs]uint64{id}, Text: text})
	}
	str(1, strings.Repeat("a", 40))
	str(2, strings.Repeat("b", 40))
	str(3, strings.Repeat("c", 30)) // 110 bytes: not kept
	str(3, strings.Repeat("c", 20)) // 100: kept
	str(1, strings.Repeat("A", 41)) // a longer text for 1 would pass 100: the first stays
	str(1, strings.Repeat("A", 10)) // shorter: 70 bytes now
	str(4, "d")
	str(5, "e") // a fifth string: not kept
	want := map[uint64]string{1: strings.Repeat("A", 10), 2: strings.Repeat("b", 40), 3: strings.Repeat("c", 20), 4: "d", 5: "string#5"}
	for id, w := range want {
		if got := d.String(id); got != w {
			t.Errorf("String(%d) = %q, want %q", id, got, w)
		}
	}
	if d.text != 71 {
		t.Errorf("text bytes %d, want 71", d.text)
	}
	d.add(&Def{Kind: DefKernel, Args: [MaxArgs]uint64{7, 1, 4, 4, 0}})
	for _, tag := range []uint64{2, 3, 2, 3, 4, 2} { // a decision made anew writes them again
		d.add(&Def{Kind: DefKernelTag, Args: [MaxArgs]uint64{7, tag}})
	}
	if got, w := strings.Join(d.Kernel(7).Tags, ","), strings.Repeat("b", 40)+","+strings.Repeat("c", 20); got != w {
		t.Errorf("tags %q, want %q", got, w)
	}
	// Not kept: strings 3 (once), 1 (once), 5; tag 4.
	if got := d.LeftOut(); got != 4 {
		t.Errorf("LeftOut %d, want 4", got)
	}
}

// A file of large strings that compress to nothing (3,000 of 1 MiB once
// took every command to 3 GB) is read within MaxDictText.
func TestDictBoundsBomb(t *testing.T) {
	defer func(text int64) { MaxDictText = text }(MaxDictText)
	MaxDictText = 4 << 20
	var d Dict
	big := strings.Repeat("x", MaxString-8)
	for i := range 40 {
		d.add(&Def{Kind: DefString, Args: [MaxArgs]uint64{uint64(i + 1)}, Text: big + strconv.Itoa(i)})
	}
	if d.text > MaxDictText || len(d.strings) != 4 || d.LeftOut() != 36 {
		t.Errorf("kept %d strings of %d bytes, %d left out; want 4 within %d, 36 left out", len(d.strings), d.text, d.LeftOut(), MaxDictText)
	}
}
