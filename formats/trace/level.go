package trace

import (
	"fmt"

	"github.com/klauspost/compress/zstd"
)

// Level is a compression level, as the config spells it: "fastest",
// "default", "better" or "best". The zero Level means LevelFastest.
//
// Fastest is S2, the others zstd (FORMAT.md §3): a traced program's writer
// turns each event into about 2 bytes of varints, which zstd's fastest
// level compresses at about 200 MB/s (10 ns per event, more than the rest
// of the writer) and S2 at about 900 MB/s, for traces up to a third larger.
type Level uint8

const (
	LevelFastest Level = iota + 1 // S2: the default, for tracing live
	LevelDefault                  // zstd SpeedDefault
	LevelBetter                   // zstd SpeedBetterCompression
	LevelBest                     // zstd SpeedBestCompression: for offline re-encoding
	levelEnd                      // sentinel
)

var levelNames = [levelEnd]string{"", "fastest", "default", "better", "best"}

func (l Level) String() string {
	if l > 0 && l < levelEnd {
		return levelNames[l]
	}
	return fmt.Sprintf("Level(%d)", uint8(l))
}

// ParseLevel returns the level called name.
func ParseLevel(name string) (Level, error) {
	for l := LevelFastest; l < levelEnd; l++ {
		if levelNames[l] == name {
			return l, nil
		}
	}
	return 0, fmt.Errorf("unknown compression level %q (want fastest, default, better or best)", name)
}

// zstd is the zstd level of the levels that write zstd (codec).
func (l Level) zstd() zstd.EncoderLevel {
	switch l {
	case LevelBetter:
		return zstd.SpeedBetterCompression
	case LevelBest:
		return zstd.SpeedBestCompression
	}
	return zstd.SpeedDefault
}

// codec is the chunk codec the level writes with.
func (l Level) codec() byte {
	if l == LevelFastest || l == 0 {
		return codecS2
	}
	return codecZstd
}
