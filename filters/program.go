package filters

import (
	"errors"
	"fmt"
	"math"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/libocca/occa-tools/filters/config"
	"github.com/libocca/occa-tools/formats/trace"
)

// Program is a config compiled into the decisions the runtime asks for once
// per object. All its methods are safe for concurrent use.
type Program struct {
	cfg        *config.Config
	mask       uint64
	deviceTime bool

	devModes, memModes []string
	devIdx, memIdx     map[int64]bool

	incNames, excNames []string
	incRegex, excRegex []*regexp.Regexp
	incTags, excTags   map[string]bool
	rules              []tagRule

	memTags        map[string]bool
	memMin, memMax uint64

	windows     []Window
	signal      int
	maxEvents   uint64
	maxBytes    uint64
	startPaused bool

	mu      sync.RWMutex
	apiTags map[string][]string // kernel name -> tags from TagKernel
}

type tagRule struct {
	glob string
	re   *regexp.Regexp
	tag  string
}

// DeviceDecision says whether a device's events are recorded (Selected) and
// whether its memory objects are (MemorySelected: Selected and the
// filter.memory modes and indices).
type DeviceDecision struct {
	Selected       bool
	MemorySelected bool
}

// KernelDecision is everything decided once per kernel.
type KernelDecision struct {
	Selected bool     // its builds and launches are recorded (subject to the event mask and triggers)
	Tags     []string // its tags: [[tag]] rules, then build properties, then TagKernel; nil when none
	Windows  uint16   // bit i set when launch window i (Windows()[i]) counts its launches
}

// WindowKind says what opens and closes a window.
type WindowKind uint8

const (
	WindowLaunch WindowKind = iota + 1 // launches From..To of matching kernels
	WindowRegion                       // instances From..To of a user region
	WindowTime                         // from Delay after start, for Duration
)

func (k WindowKind) String() string {
	switch k {
	case WindowLaunch:
		return "launch"
	case WindowRegion:
		return "region"
	case WindowTime:
		return "time"
	}
	return "window(" + strconv.Itoa(int(k)) + ")"
}

// Window is one compiled [[trigger.window]].
type Window struct {
	Kind WindowKind
	// Launch windows: exactly one selector is set.
	Kernel      string // glob on the kernel name
	KernelRegex string
	KernelTag   string
	// Region windows: glob on the region name.
	Region string
	// Launch and region windows: the first and last counted instance,
	// 1-based and inclusive; To == 0 means no end.
	From, To uint64
	// Time windows: opens Delay after start, stays open Duration (0: forever).
	Delay, Duration time.Duration

	re *regexp.Regexp
}

// Describe says in a few words what the window covers, for logs and dumps.
func (w Window) Describe() string {
	span := fmt.Sprintf("%d..%d", w.From, w.To)
	if w.To == 0 {
		span = fmt.Sprintf("%d..(no end)", w.From)
	}
	switch w.Kind {
	case WindowLaunch:
		sel := fmt.Sprintf("kernel %q", w.Kernel)
		if w.KernelRegex != "" {
			sel = fmt.Sprintf("kernel_regex %q", w.KernelRegex)
		} else if w.KernelTag != "" {
			sel = fmt.Sprintf("kernel_tag %q", w.KernelTag)
		}
		return "launches " + span + " of " + sel
	case WindowRegion:
		return fmt.Sprintf("instances %s of region %q", span, w.Region)
	case WindowTime:
		if w.Duration == 0 {
			return fmt.Sprintf("time from %v after start, no end", w.Delay)
		}
		return fmt.Sprintf("time from %v after start for %v", w.Delay, w.Duration)
	}
	return w.Kind.String()
}

// matchKernel reports whether a launch window counts a kernel's launches.
func (w *Window) matchKernel(name string, tags []string) bool {
	switch {
	case w.Kind != WindowLaunch:
		return false
	case w.Kernel != "":
		return glob(w.Kernel, name)
	case w.re != nil:
		return w.re.MatchString(name)
	}
	for _, t := range tags {
		if t == w.KernelTag {
			return true
		}
	}
	return false
}

func glob(pattern, name string) bool {
	ok, _ := path.Match(pattern, name)
	return ok
}

// Compile turns a config into a Program. A config from config.Parse or
// config.Load always compiles (whatever errors Parse reported, the config it
// returned is valid); Compile checks a config built by hand the same way.
func Compile(cfg *config.Config) (*Program, error) {
	if cfg == nil {
		return nil, errors.New("filters: nil config")
	}
	p := &Program{cfg: cfg, apiTags: map[string][]string{}, deviceTime: cfg.Events.DeviceTime}
	var errs []error
	fail := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}

	var err error
	p.mask, err = eventMask(cfg.Events.Enable, cfg.Events.Disable, cfg.Events.DeviceTime)
	fail(err)

	p.devModes, p.devIdx = lowerAll(cfg.Filter.Device.Modes), indexSet(cfg.Filter.Device.Indices)
	p.memModes, p.memIdx = lowerAll(cfg.Filter.Memory.Modes), indexSet(cfg.Filter.Memory.Indices)

	k := cfg.Filter.Kernel
	p.incNames, err = globs("filter.kernel.names", k.Names)
	fail(err)
	p.excNames, err = globs("filter.kernel.exclude_names", k.ExcludeNames)
	fail(err)
	p.incRegex, err = regexps("filter.kernel.regex", k.Regex)
	fail(err)
	p.excRegex, err = regexps("filter.kernel.exclude_regex", k.ExcludeRegex)
	fail(err)
	p.incTags, p.excTags = stringSet(k.Tags), stringSet(k.ExcludeTags)

	for i, r := range cfg.Tags {
		tr := tagRule{glob: r.Kernel, tag: r.Tag}
		switch {
		case r.Tag == "":
			fail(fmt.Errorf("tag[%d]: empty tag", i))
		case (r.Kernel == "") == (r.KernelRegex == ""):
			fail(fmt.Errorf("tag[%d]: give exactly one of kernel or kernel_regex", i))
		case r.Kernel != "":
			_, err := globs(fmt.Sprintf("tag[%d].kernel", i), []string{r.Kernel})
			fail(err)
		default:
			res, err := regexps(fmt.Sprintf("tag[%d].kernel_regex", i), []string{r.KernelRegex})
			fail(err)
			if err == nil {
				tr.re = res[0]
			}
		}
		p.rules = append(p.rules, tr)
	}

	m := cfg.Filter.Memory
	p.memTags, p.memMin, p.memMax = stringSet(m.Tags), m.MinBytes, m.MaxBytes
	if p.memMax == 0 {
		p.memMax = math.MaxUint64
	}
	if p.memMax < p.memMin {
		fail(errors.New("filter.memory.max_bytes is below min_bytes"))
	}

	if len(cfg.Trigger.Windows) > config.MaxWindows {
		fail(fmt.Errorf("trigger.window: %d windows; at most %d are allowed", len(cfg.Trigger.Windows), config.MaxWindows))
	}
	for i, wc := range cfg.Trigger.Windows {
		w, err := compileWindow(i, wc)
		fail(err)
		p.windows = append(p.windows, w)
	}

	if p.signal, _, err = config.ParseSignal(cfg.Trigger.ToggleSignal); err != nil {
		fail(fmt.Errorf("trigger.toggle_signal: %v", err))
	}
	p.maxEvents, p.maxBytes, p.startPaused = cfg.Trigger.MaxEvents, cfg.Trigger.MaxBytes, cfg.Trigger.StartPaused
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}

func compileWindow(i int, wc config.WindowConfig) (Window, error) {
	w := Window{Kernel: wc.Kernel, KernelRegex: wc.KernelRegex, KernelTag: wc.KernelTag, Region: wc.Region,
		From: wc.From, To: wc.To, Delay: wc.Delay, Duration: wc.Duration}
	forms := 0
	for _, s := range []string{wc.Kernel, wc.KernelRegex, wc.KernelTag, wc.Region} {
		if s != "" {
			forms++
		}
	}
	where := fmt.Sprintf("trigger.window[%d]", i)
	switch {
	case forms > 1:
		return w, fmt.Errorf("%s: more than one of kernel, kernel_regex, kernel_tag, region", where)
	case forms == 0:
		w.Kind = WindowTime
		if w.Delay < 0 || w.Duration < 0 {
			return w, fmt.Errorf("%s: negative delay or duration", where)
		}
		return w, nil
	case wc.Region != "":
		w.Kind = WindowRegion
		if _, err := globs(where+".region", []string{wc.Region}); err != nil {
			return w, err
		}
	default:
		w.Kind = WindowLaunch
		if wc.Kernel != "" {
			if _, err := globs(where+".kernel", []string{wc.Kernel}); err != nil {
				return w, err
			}
		}
		if wc.KernelRegex != "" {
			res, err := regexps(where+".kernel_regex", []string{wc.KernelRegex})
			if err != nil {
				return w, err
			}
			w.re = res[0]
		}
	}
	if w.From == 0 {
		return w, fmt.Errorf("%s: from must be >= 1", where)
	}
	if w.To != 0 && w.To < w.From {
		return w, fmt.Errorf("%s: to (%d) is before from (%d)", where, w.To, w.From)
	}
	return w, nil
}

// kindsOf lists the kinds an events word names; ok is false for an unknown
// word. A begin or end kind brings its other half: pairs are never split.
func kindsOf(word string) ([]trace.Kind, bool) {
	var out []trace.Kind
	if word == "all" {
		return trace.EventKinds(), true
	}
	if d, ok := trace.ParseDomain(word); ok {
		for _, k := range trace.EventKinds() {
			if k.Spec().Domain == d {
				out = append(out, k)
			}
		}
		return out, true
	}
	k, ok := trace.ParseKind(word)
	if !ok || k.IsDef() || k.Spec() == nil { // ParseKind("") is KindInvalid
		return nil, false
	}
	out = append(out, k)
	if pair := k.Spec().Pair; pair != trace.KindInvalid {
		out = append(out, pair)
	}
	return out, true
}

func eventMask(enable, disable []string, deviceTime bool) (uint64, error) {
	var mask uint64
	var errs []error
	for _, w := range enable {
		ks, ok := kindsOf(w)
		if !ok {
			errs = append(errs, fmt.Errorf("events.enable: unknown word %q", w))
		}
		for _, k := range ks {
			mask |= 1 << k
		}
	}
	for _, w := range disable {
		ks, ok := kindsOf(w)
		if !ok {
			errs = append(errs, fmt.Errorf("events.disable: unknown word %q", w))
		}
		for _, k := range ks {
			mask &^= 1 << k
		}
	}
	for _, k := range trace.EventKinds() {
		if k.Spec().Domain == trace.DomainTool {
			mask |= 1 << k
		}
	}
	if !deviceTime {
		mask &^= 1 << trace.DeviceTime
	}
	return mask, errors.Join(errs...)
}

func lowerAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = strings.ToLower(x)
	}
	return out
}

func indexSet(idx []int64) map[int64]bool {
	m := make(map[int64]bool, len(idx))
	for _, i := range idx {
		m[i] = true
	}
	return m
}

func stringSet(s []string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, x := range s {
		m[x] = true
	}
	return m
}

func globs(key string, pats []string) ([]string, error) {
	for _, g := range pats {
		if _, err := path.Match(g, ""); err != nil || g == "" {
			return nil, fmt.Errorf("%s: bad glob %q", key, g)
		}
	}
	return pats, nil
}

func regexps(key string, pats []string) ([]*regexp.Regexp, error) {
	out := make([]*regexp.Regexp, len(pats))
	for i, s := range pats {
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", key, err)
		}
		out[i] = re
	}
	return out, nil
}

// Config returns the config the program was compiled from.
func (p *Program) Config() *config.Config { return p.cfg }

// EventMask has bit k set when events of trace.Kind k are recorded: the
// kinds named by events.enable minus those named by events.disable (a begin
// or end kind always brings its pair), plus the tool's own kinds (dropped,
// trigger, fork), which are always on. DeviceTime is on only when
// events.device_time is true, so sources can test the bit to decide whether
// to time kernels on the device.
func (p *Program) EventMask() uint64 { return p.mask }

// DeviceTime reports events.device_time.
func (p *Program) DeviceTime() bool { return p.deviceTime }

// OpenMPAll reports whether the OMPT tool records all OpenMP activity
// (openmp.scope = "all") rather than only inside recorded launches.
func (p *Program) OpenMPAll() bool { return p.cfg.OpenMP.Scope == config.OpenMPAll }

// Device decides about a device from its setup arguments. Selected: mode is
// in filter.device.modes (case-insensitive; empty list = all) and index is in
// filter.device.indices (empty = all). MemorySelected: Selected and the same
// test against filter.memory.modes and indices. properties is not used yet.
func (p *Program) Device(mode string, index int64, properties string) DeviceDecision {
	sel := modeIn(p.devModes, mode) && (len(p.devIdx) == 0 || p.devIdx[index])
	mem := sel && modeIn(p.memModes, mode) && (len(p.memIdx) == 0 || p.memIdx[index])
	return DeviceDecision{Selected: sel, MemorySelected: mem}
}

func modeIn(modes []string, mode string) bool {
	if len(modes) == 0 {
		return true
	}
	m := strings.ToLower(mode)
	for _, x := range modes {
		if x == m {
			return true
		}
	}
	return false
}

// Kernel decides about a kernel from its name and build properties text.
func (p *Program) Kernel(name, properties string) KernelDecision {
	var tags []string
	add := func(t string) {
		if t == "" {
			return
		}
		for _, x := range tags {
			if x == t {
				return
			}
		}
		tags = append(tags, t)
	}
	for _, r := range p.rules {
		if (r.re != nil && r.re.MatchString(name)) || (r.re == nil && glob(r.glob, name)) {
			add(r.tag)
		}
	}
	for _, t := range PropertiesTags(properties) {
		add(t)
	}
	p.mu.RLock()
	for _, t := range p.apiTags[name] {
		add(t)
	}
	p.mu.RUnlock()

	included := len(p.incNames) == 0 && len(p.incRegex) == 0 && len(p.incTags) == 0 ||
		matchAny(name, tags, p.incNames, p.incRegex, p.incTags)
	selected := included && !matchAny(name, tags, p.excNames, p.excRegex, p.excTags)

	var win uint16
	for i := range p.windows {
		if p.windows[i].matchKernel(name, tags) {
			win |= 1 << i
		}
	}
	return KernelDecision{Selected: selected, Tags: tags, Windows: win}
}

func matchAny(name string, tags, globs []string, res []*regexp.Regexp, tagSet map[string]bool) bool {
	for _, g := range globs {
		if glob(g, name) {
			return true
		}
	}
	for _, re := range res {
		if re.MatchString(name) {
			return true
		}
	}
	for _, t := range tags {
		if tagSet[t] {
			return true
		}
	}
	return false
}

// TagKernel gives tag to every kernel named exactly name, for every later
// Kernel call (the control API's occa_tools_tag_kernel; the runtime asks
// Kernel again for the kernels it already knows). An empty name or tag is
// ignored; tagging twice is harmless.
func (p *Program) TagKernel(name, tag string) {
	if name == "" || tag == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range p.apiTags[name] {
		if t == tag {
			return
		}
	}
	p.apiTags[name] = append(p.apiTags[name], tag)
}

// MemoryTagSelected reports whether memory carrying tag ("" for none) is
// recorded: always when filter.memory.tags is empty, else only when tag is
// one of them (so untagged memory is not).
func (p *Program) MemoryTagSelected(tag string) bool {
	return len(p.memTags) == 0 || p.memTags[tag]
}

// MemorySizeRange returns the sizes of allocations that are recorded,
// inclusive: min is filter.memory.min_bytes, max is max_bytes or
// math.MaxUint64 when max_bytes is 0.
func (p *Program) MemorySizeRange() (min, max uint64) { return p.memMin, p.memMax }

// Region returns the bitmask of region windows (by index in Windows()) whose
// glob matches a region name.
func (p *Program) Region(name string) uint16 {
	var m uint16
	for i, w := range p.windows {
		if w.Kind == WindowRegion && glob(w.Region, name) {
			m |= 1 << i
		}
	}
	return m
}

// Windows returns the compiled windows in config order; index i is bit i of
// KernelDecision.Windows and Region masks, and the window argument of
// Trigger events.
func (p *Program) Windows() []Window {
	return append([]Window(nil), p.windows...)
}

// Budget returns trigger.max_events and trigger.max_bytes (0 = none).
func (p *Program) Budget() (events, bytes uint64) {
	return p.maxEvents, p.maxBytes
}

// StartPaused reports trigger.start_paused.
func (p *Program) StartPaused() bool { return p.startPaused }

// ToggleSignal returns the Linux number of trigger.toggle_signal, 0 for none
// (see config.ParseSignal).
func (p *Program) ToggleSignal() int { return p.signal }
