package main

import (
	"os"
	"syscall"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"

	"github.com/libocca/occa-tools/filters/config"
)

// logOut is the tool's own copy of the stderr the program started with: a
// daemon may close descriptor 2 and open a file of its own there, which
// the tool's messages must not reach. runtime/src/fds.c keeps the copy from
// the program's close() like the tool's other descriptors.
var logOut = stderrCopy()

func stderrCopy() *os.File {
	fd, _, errno := syscall.Syscall(syscall.SYS_FCNTL, 2, syscall.F_DUPFD_CLOEXEC, 3)
	if errno != 0 {
		return os.Stderr
	}
	return os.NewFile(fd, "/dev/stderr")
}

// logger writes one line per message on stderr, prefixed so that it stands
// out in the application's own output.
var logger = newLogger(zerolog.WarnLevel)

func newLogger(level zerolog.Level) zerolog.Logger {
	zerolog.TimeFieldFormat = zerolog.TimeFormatUnixMicro
	w := zerolog.ConsoleWriter{
		Out:        logOut,
		NoColor:    !isatty.IsTerminal(logOut.Fd()),
		TimeFormat: "15:04:05.000",
		FormatMessage: func(i any) string {
			if s, ok := i.(string); ok { // may quote anything from outside
				return "occa-tools: " + config.Printable(s, 4096)
			}
			return "occa-tools:"
		},
	}
	return zerolog.New(w).Level(level).With().Timestamp().Int("pid", os.Getpid()).Logger()
}

// envLevel is OCCA_TOOLS_LOG_LEVEL when it names a level (see readEnv).
var envLevel *zerolog.Level

// levelFrom applies OCCA_TOOLS_LOG_LEVEL over the config's level.
func levelFrom(cfg config.Level) zerolog.Level {
	if envLevel != nil {
		return *envLevel
	}
	return zerolog.Level(cfg)
}

// logAt logs a message from the C side (levels of OT_LOG_*).
func logAt(level int, msg string) {
	switch level {
	case 0:
		logger.Debug().Msg(msg)
	case 1:
		logger.Info().Msg(msg)
	case 2:
		logger.Warn().Msg(msg)
	default:
		logger.Error().Msg(msg)
	}
}
