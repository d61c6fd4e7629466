package trace

import (
	"fmt"

	"github.com/klauspost/compress/zstd"
)

// Level is a compression level, as the config spells it: "fastest",
// "default", "better" or "best". The zero Level means LevelFastest.
type Level uint8

const (
	LevelFastest Level = iota + 1 // zstd SpeedFastest: the default, for tracing live
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

func (l Level) zstd() zstd.EncoderLevel {
	switch l {
	case LevelDefault:
		return zstd.SpeedDefault
	case LevelBetter:
		return zstd.SpeedBetterCompression
	case LevelBest:
		return zstd.SpeedBestCompression
	}
	return zstd.SpeedFastest
}
