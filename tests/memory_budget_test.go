package tests

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/libocca/occa-tools/tests/cpuload"
	"github.com/libocca/occa-tools/tests/testproc"
)

// The tool's whole footprint (buffers, Go runtime and heap, compressors,
// code) stays within output.memory, also when the writer falls behind and
// every buffer fills: four threads per CPU record as fast as they can while
// two CPU hogs take more CPU from the writer. (With one thread per CPU, the
// writer, which compresses whole buffers as they are, keeps up.) The footprint is the peak resident
// memory (VmHWM) of the traced run minus that of the same program loaded
// without a config.
func TestToolMemoryWithinBudget(t *testing.T) {
	const budget = 64 << 20 // the default output.memory
	stop := cpuload.Hogs(2)
	defer stop()
	untraced := peakRSS(t, nil)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "trace.toml")
	os.WriteFile(cfg, []byte("[output]\nmemory = \"64MiB\"\n"), 0o644)
	traced := peakRSS(t, []string{"OCCA_TOOLS_CONFIG=" + cfg, "OCCA_TOOLS_OUTPUT_DIR=" + filepath.Join(dir, "out")})
	tool := traced - untraced
	t.Logf("peak RSS: untraced %d KiB, traced %d KiB: the tool %.1f MiB of the %d MiB budget",
		untraced>>10, traced>>10, float64(tool)/(1<<20), budget>>20)
	if tool > budget {
		t.Errorf("the tool's peak is %.1f MiB, over output.memory = %d MiB", float64(tool)/(1<<20), budget>>20)
	}
	if traced-untraced < 32<<20 {
		t.Errorf("the tool's peak is only %.1f MiB: the buffers did not fill, so the budget was not tested", float64(tool)/(1<<20))
	}
}

// peakRSS runs the workload flat out for 2.5 s with env added and returns
// the largest VmHWM seen, in bytes.
func peakRSS(t *testing.T, env []string) int64 {
	t.Helper()
	threads := strconv.Itoa(max(8, 4*runtime.NumCPU()))
	cmd := testproc.Command(t, filepath.Join(buildDir, "tests", "workload"), "-t", threads, "--spin-forever")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), env...)
	if env == nil {
		cmd.Env = append(cmd.Env, "OCCA_TOOLS_CONFIG=")
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	var peak int64
	for end := time.Now().Add(2500 * time.Millisecond); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if kb := vmHWM(cmd.Process.Pid); kb > peak {
			peak = kb
		}
	}
	if peak == 0 {
		t.Fatal("no VmHWM read from /proc")
	}
	return peak << 10
}

func vmHWM(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(rest), "%d", &kb)
			return kb
		}
	}
	return 0
}
