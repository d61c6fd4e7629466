package main

import "strings"

// childEnv is env with the variables that make PROGRAM traced: the config,
// the output directory and the preload shim, put before the user's
// LD_PRELOAD (whose libraries keep their order after it).
func childEnv(env []string, config, outDir, preload string) []string {
	out := make([]string, 0, len(env)+3)
	user := ""
	for _, kv := range env {
		name, val, _ := strings.Cut(kv, "=")
		switch name {
		case "OCCA_TOOLS_CONFIG", "OCCA_TOOLS_OUTPUT_DIR":
			continue
		case "LD_PRELOAD":
			user = strings.TrimSpace(val)
			continue
		}
		out = append(out, kv)
	}
	pre := preload
	if user != "" {
		pre += ":" + user
	}
	return append(out, "OCCA_TOOLS_CONFIG="+config, "OCCA_TOOLS_OUTPUT_DIR="+outDir, "LD_PRELOAD="+pre)
}
