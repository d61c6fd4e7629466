#!/bin/sh
# mkman.sh OCCA_TOOLS VERSION: writes the occa-tools(1) man page on stdout,
# made from the binary's own help texts, so the two always match.
set -eu
tool=$1 version=$2
esc() { sed -e 's/\\/\\e/g' -e 's/^[.'"'"']/\\\&&/'; }
printf '.TH OCCA-TOOLS 1 "" "occa-tools %s" "occa-tools manual"\n' "$version"
printf '.SH NAME\nocca-tools \\- read the trace files that the occa-tools runtime writes\n'
printf '.SH SYNOPSIS\n.B occa-tools\n.I command\n[\n.I arguments\n]\n'
printf '.SH DESCRIPTION\n.nf\n'
"$tool" help | esc
printf '.fi\n.SH COMMANDS\n'
for cmd in $("$tool" help | sed -n 's/^\t\([a-z][a-z-]*\)  .*/\1/p'); do
  printf '.SS %s\n.nf\n' "$cmd"
  "$tool" help "$cmd" | esc
  printf '.fi\n'
done
printf '.SH FILES\n.TP\n.I share/occa-tools/configs/*.toml\nthe default config and one example per feature, under the install prefix\n'
printf '.SH ENVIRONMENT\n.TP\n.B OCCA_TOOLS_CONFIG\nthe config of a traced program; without it the runtime does nothing\n'
printf '.TP\n.B OCCA_TOOLS_OUTPUT_DIR, OCCA_TOOLS_LOG_LEVEL, OCCA_TOOLS_ON_ERROR\noverride the config\n'
