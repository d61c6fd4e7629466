package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/libocca/occa-tools/filters/config"
)

// configFile returns the config PROGRAM gets (absolute) and a function that
// removes the temporary copy --device-time writes (safe to call twice).
func configFile(o *options, in *install) (string, func(), error) {
	none := func() {}
	path := o.config
	if path == "" {
		if in.config == "" {
			return "", none, errors.New("no config given and no default.toml installed (share/occa-tools/configs/default.toml); use --config FILE")
		}
		path = in.config
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", none, err
	}
	text, err := config.ReadFile(abs) // a named pipe would block here
	if err != nil {
		return "", none, fmt.Errorf("config: %v", err)
	}
	if !o.deviceTime {
		return abs, none, nil
	}
	f, err := os.CreateTemp("", "occa-prof-*.toml")
	if err != nil {
		return "", none, fmt.Errorf("config: %v", err)
	}
	merged := "# occa-prof --device-time: " + abs + " with events.device_time = true\n" +
		withDeviceTime(string(text))
	_, err = f.WriteString(merged)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	name := f.Name()
	cleanup := func() { os.Remove(name) }
	if err != nil {
		cleanup()
		return "", none, fmt.Errorf("config: %v", err)
	}
	return name, cleanup, nil
}

var (
	tableHeader = regexp.MustCompile(`^\s*\[\s*([A-Za-z0-9_.\-" ]+?)\s*\]\s*(#.*)?$`)
	arrayHeader = regexp.MustCompile(`^\s*\[\[`)
	deviceKey   = regexp.MustCompile(`^\s*device_time\s*=`)
)

// withDeviceTime returns the TOML text with events.device_time = true: the
// key replaced in the [events] table, added to it, or a new [events] table
// appended. (A dotted events.device_time key at the top level is not
// recognised; write it in an [events] table.)
func withDeviceTime(text string) string {
	lines := strings.SplitAfter(text, "\n")
	table, eventsAt := "", -1
	for i, l := range lines {
		if arrayHeader.MatchString(l) {
			table = "[[]]"
			continue
		}
		if m := tableHeader.FindStringSubmatch(l); m != nil {
			table = strings.ReplaceAll(m[1], " ", "")
			if table == "events" {
				eventsAt = i
			}
			continue
		}
		if table == "events" && deviceKey.MatchString(l) {
			lines[i] = "device_time = true # occa-prof --device-time\n"
			return strings.Join(lines, "")
		}
	}
	if eventsAt >= 0 {
		out := append([]string{}, lines[:eventsAt+1]...)
		if !strings.HasSuffix(out[eventsAt], "\n") {
			out[eventsAt] += "\n"
		}
		out = append(out, "device_time = true # occa-prof --device-time\n")
		return strings.Join(append(out, lines[eventsAt+1:]...), "")
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text + "\n[events]\ndevice_time = true # occa-prof --device-time\n"
}
