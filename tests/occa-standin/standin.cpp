// standin.cpp: the OCCA stand-in library (libocca.so for occa-tools' tests).
//
// See include/occa.hpp for what this is. Built with g++ -O2 -g -fPIC -shared
// and default visibility, like real libocca: every function defined here is
// exported and can be interposed, so the library's calls to its own exported
// functions go through the PLT and a preloaded definition catches them.
//
// Call structure kept on purpose (the preload adapter relies on it; each item
// was checked against OCCA 2.0's sources):
//   - device(string) -> device(json) -> setup(json); setup(string) ->
//     setup(json); setup(json) calls free() first, then createStream() and
//     setStream() for the initial stream.
//   - every malloc ends in device::malloc(entries, dtype, const void *src,
//     props); a src is copied inside the allocation (no copyFrom call);
//     malloc(entries, dtype, memory src, props) is malloc(..., NULL, ...)
//     followed by copyFrom(src) (the full D2D overload, defaults filled in).
//   - short copy overloads and occa::memcpy call the full copyFrom/copyTo.
//   - buildKernelFromString writes the source into the kernel cache and calls
//     buildKernel on that file.
//   - every operator() sets the arguments directly and calls run(); run({..})
//     calls clearArgs(), pushArg() for each argument, then run().
//   - the C API calls the C++ API; occaDeviceMalloc calls
//     occaDeviceTypedMalloc; occaKernelRunN calls occaKernelVaRun, which sets
//     the arguments directly and calls kernel::run().
//   - memory objects: modeMemory_t (abstract) with a derived class; deleting
//     any of them (allocation, slice, pool reservation) runs
//     modeMemory_t::~modeMemory_t through the PLT. device::free() calls
//     modeDevice_t::freeResources() and then deletes the mode device, whose
//     derived destructor runs modeDevice_t::~modeDevice_t through the PLT.
//
// Kernels: the stand-in compiles nothing. buildKernel reads the source file
// (occa::exception if it cannot), hashes source + properties + mode, and
// looks for $OCCA_CACHE_DIR/cache/<hash>/binary ($OCCA_CACHE_DIR defaults to
// $HOME/.occa); on a miss it sleeps 2 ms (the "compiler") and writes that
// file. kernel::run() then does:
//   - for a kernel named "addVectors" with arguments (int n, memory a,
//     memory b, memory ab): ab[i] = a[i] + b[i] over n floats;
//   - for any kernel whose build properties have sleep_ns: sleeps that long;
//   - nothing otherwise.
#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>

#include <dlfcn.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "occa.hpp"
#include "occa.h"

namespace {
  // The handles that refer to one mode object. Deleting the object makes
  // them all uninitialized. While counting, the object is also deleted when
  // its last handle goes; after dontUseRefs() only an explicit free() deletes
  // it. (Unlike OCCA, handles stay tracked after dontUseRefs(), so that none
  // is left dangling when the object is freed.)
  template <class H>
  struct handleList {
    std::vector<H*> handles;
    bool counting = true;

    void add(H *h) {
      handles.push_back(h);
    }

    // True when h was the last handle of a counted object.
    bool remove(H *h) {
      typename std::vector<H*>::iterator it = std::find(handles.begin(), handles.end(), h);
      if (it != handles.end()) {
        handles.erase(it);
      }
      return counting && handles.empty();
    }

    void stopCounting() {
      counting = false;
    }
  };

  template <class T>
  void eraseValue(std::vector<T*> &v, T *x) {
    typename std::vector<T*>::iterator it = std::find(v.begin(), v.end(), x);
    if (it != v.end()) {
      v.erase(it);
    }
  }

  [[noreturn]] void fail(const std::string &message) {
    throw occa::exception(message);
  }

  double monotonicSeconds() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
  }

  void sleepNanoseconds(int64_t ns) {
    if (ns <= 0) {
      return;
    }
    struct timespec ts;
    ts.tv_sec = (time_t) (ns / 1000000000);
    ts.tv_nsec = (long) (ns % 1000000000);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
  }

  // 64-bit FNV-1a.
  uint64_t hashBytes(uint64_t h, const std::string &s) {
    for (unsigned char ch : s) {
      h ^= ch;
      h *= 1099511628211ULL;
    }
    return h;
  }

  std::string hexHash(const std::string &a, const std::string &b, const std::string &c) {
    uint64_t h = 14695981039346656037ULL;
    h = hashBytes(h, a);
    h = hashBytes(h, std::string(1, '\0'));
    h = hashBytes(h, b);
    h = hashBytes(h, std::string(1, '\0'));
    h = hashBytes(h, c);
    char out[17];
    snprintf(out, sizeof(out), "%016llx", (unsigned long long) h);
    return out;
  }

  std::string cacheRoot() {
    const char *dir = getenv("OCCA_CACHE_DIR");
    if (dir && *dir) {
      return dir;
    }
    const char *home = getenv("HOME");
    return std::string((home && *home) ? home : "/tmp") + "/.occa";
  }

  void makeDirs(const std::string &path) {
    std::string partial;
    std::stringstream ss(path);
    std::string part;
    if (!path.empty() && path[0] == '/') {
      partial = "/";
    }
    while (std::getline(ss, part, '/')) {
      if (part.empty()) {
        continue;
      }
      partial += part + "/";
      if (mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
        fail("cannot create directory " + partial + ": " + strerror(errno));
      }
    }
  }

  bool fileExists(const std::string &path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0;
  }

  bool readFile(const std::string &path, std::string &out) {
    std::ifstream in(path.c_str(), std::ios::in | std::ios::binary);
    if (!in) {
      return false;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    out = ss.str();
    return true;
  }

  // Writes through a temporary file and a rename, so that a concurrent
  // reader never sees half a file.
  void writeFileAtomically(const std::string &path, const std::string &content) {
    std::string tmp = path + ".tmp." + std::to_string((long) getpid());
    {
      std::ofstream out(tmp.c_str(), std::ios::out | std::ios::binary | std::ios::trunc);
      if (!out) {
        fail("cannot write " + tmp);
      }
      out << content;
      if (!out) {
        fail("cannot write " + tmp);
      }
    }
    if (rename(tmp.c_str(), path.c_str()) != 0) {
      std::remove(tmp.c_str());
      fail("cannot rename " + tmp + " to " + path);
    }
  }

  const occa::json& noneJson() {
    static const occa::json none;
    return none;
  }
}

namespace occa {
  struct buffer_t;

  // ---[ Mode classes (not part of the public header) ]-----------------------
  class modeDevice_t {
   public:
    handleList<device> handles;
    std::string mode;
    json properties;
    stream currentStream;
    udim_t bytesAllocated;
    udim_t maxBytesAllocated;

    std::vector<modeKernel_t*> kernels;
    std::vector<buffer_t*> buffers;
    std::vector<modeMemoryPool_t*> pools;
    std::vector<modeStream_t*> streams;
    std::vector<modeStreamTag_t*> tags;

    modeDevice_t(const std::string &mode_, const json &properties_);

    // Frees every object still allocated on the device. device::free() calls
    // it before deleting the mode device.
    void freeResources();

    virtual ~modeDevice_t() = 0;

    // An allocation of bytes, filled from src when src is not NULL.
    virtual modeMemory_t* allocate(const udim_t bytes,
                                   const void *src,
                                   const json &props) = 0;
  };

  // The storage of an allocation, shared by the allocation and its slices
  // (pool: the pool's storage, shared by its reservations).
  struct buffer_t {
    modeDevice_t *modeDevice;
    modeMemoryPool_t *pool;
    bool wrapped;  // the application's memory (wrapMemory): not ours to free
    char *data;
    udim_t bytes;
    json properties;
    std::vector<modeMemory_t*> views;
  };

  class modeMemory_t {
   public:
    handleList<memory> handles;
    buffer_t *buffer;
    char *ptr;
    udim_t size;
    udim_t offset;
    dtype_t dtype_;

    modeMemory_t(buffer_t *buffer_, const udim_t offset_, const udim_t size_);
    virtual ~modeMemory_t();

    virtual void write(const void *src, const udim_t bytes, const udim_t offset_) = 0;
    virtual void read(void *dest, const udim_t bytes, const udim_t offset_) const = 0;
    virtual void writeFrom(const modeMemory_t *src,
                           const udim_t bytes,
                           const udim_t destOffset,
                           const udim_t srcOffset) = 0;

    modeDevice_t* getModeDevice() const;
  };

  class modeKernel_t {
   public:
    handleList<kernel> handles;
    modeDevice_t *modeDevice;
    std::string name;
    std::string sourceFilename;
    std::string binaryFilename;
    json properties;
    int64_t sleepNs;
    std::vector<kernelArgData> arguments;

    modeKernel_t(modeDevice_t *modeDevice_);
    virtual ~modeKernel_t();

    void setArguments(const kernelArg *args, const int count);
    void launch() const;
  };

  class modeMemoryPool_t {
   public:
    handleList<memoryPool> handles;
    modeDevice_t *modeDevice;
    json properties;
    buffer_t *storage;
    udim_t alignment;

    modeMemoryPool_t(modeDevice_t *modeDevice_, const json &properties_);
    ~modeMemoryPool_t();

    udim_t reservedBytes() const;
    void resize(const udim_t bytes);
    modeMemory_t* reserve(const udim_t bytes);
  };

  class modeStream_t {
   public:
    handleList<stream> handles;
    modeDevice_t *modeDevice;
    json properties;

    // "Queued" mode: when the device is done with what was launched on
    // this stream (monotonic seconds).
    double queuedUntil;

    modeStream_t(modeDevice_t *modeDevice_, const json &properties_);
    virtual ~modeStream_t();
  };

  class modeStreamTag_t {
   public:
    handleList<streamTag> handles;
    modeDevice_t *modeDevice;
    double seconds;

    modeStreamTag_t(modeDevice_t *modeDevice_, const double seconds_);
    ~modeStreamTag_t();
  };
}

namespace {
  // The one backend: host memory, whatever the mode string says.
  class hostMemory : public occa::modeMemory_t {
   public:
    hostMemory(occa::buffer_t *buffer_, const occa::udim_t offset_, const occa::udim_t size_);
    ~hostMemory();

    void write(const void *src, const occa::udim_t bytes, const occa::udim_t offset_);
    void read(void *dest, const occa::udim_t bytes, const occa::udim_t offset_) const;
    void writeFrom(const occa::modeMemory_t *src,
                   const occa::udim_t bytes,
                   const occa::udim_t destOffset,
                   const occa::udim_t srcOffset);
  };

  hostMemory::hostMemory(occa::buffer_t *buffer_, const occa::udim_t offset_, const occa::udim_t size_) :
    occa::modeMemory_t(buffer_, offset_, size_) {}

  // Runs occa::modeMemory_t::~modeMemory_t() (the D2 destructor) through the
  // PLT, as OCCA's backends do.
  hostMemory::~hostMemory() {}

  // Kernels and streams are backend classes too, so deleting one runs the
  // base class's D2 destructor through the PLT, as in OCCA.
  class hostKernel : public occa::modeKernel_t {
   public:
    explicit hostKernel(occa::modeDevice_t *modeDevice_) : occa::modeKernel_t(modeDevice_) {}
    ~hostKernel();
  };
  hostKernel::~hostKernel() {}

  class hostStream : public occa::modeStream_t {
   public:
    hostStream(occa::modeDevice_t *modeDevice_, const occa::json &properties_) :
      occa::modeStream_t(modeDevice_, properties_) {}
    ~hostStream();
  };
  hostStream::~hostStream() {}

  void hostMemory::write(const void *src, const occa::udim_t bytes, const occa::udim_t offset_) {
    if (bytes) {
      std::memcpy(ptr + offset_, src, bytes);
    }
  }

  void hostMemory::read(void *dest, const occa::udim_t bytes, const occa::udim_t offset_) const {
    if (bytes) {
      std::memcpy(dest, ptr + offset_, bytes);
    }
  }

  void hostMemory::writeFrom(const occa::modeMemory_t *src,
                             const occa::udim_t bytes,
                             const occa::udim_t destOffset,
                             const occa::udim_t srcOffset) {
    if (bytes) {
      std::memmove(ptr + destOffset, src->ptr + srcOffset, bytes);
    }
  }

  class hostDevice : public occa::modeDevice_t {
   public:
    hostDevice(const std::string &mode_, const occa::json &properties_);
    ~hostDevice();

    occa::modeMemory_t* allocate(const occa::udim_t bytes,
                                 const void *src,
                                 const occa::json &props);
  };

  hostDevice::hostDevice(const std::string &mode_, const occa::json &properties_) :
    occa::modeDevice_t(mode_, properties_) {}

  // Runs occa::modeDevice_t::~modeDevice_t() through the PLT.
  hostDevice::~hostDevice() {}

  occa::modeMemory_t* hostDevice::allocate(const occa::udim_t bytes,
                                           const void *src,
                                           const occa::json &props) {
    occa::buffer_t *b = new occa::buffer_t();
    b->modeDevice = this;
    b->pool = NULL;
    b->data = new char[bytes ? bytes : 1]();
    b->bytes = bytes;
    b->properties = props;
    buffers.push_back(b);
    bytesAllocated += bytes;
    maxBytesAllocated = std::max(maxBytesAllocated, bytesAllocated);
    // The initial contents are copied here, inside the allocation: no
    // copyFrom call, as in OCCA.
    if (src && bytes) {
      std::memcpy(b->data, src, bytes);
    }
    return new hostMemory(b, 0, bytes);
  }

  void releaseBuffer(occa::buffer_t *b) {
    if (b->modeDevice) {
      if (!b->pool) {
        eraseValue(b->modeDevice->buffers, b);
      }
      if (!b->wrapped) {
        b->modeDevice->bytesAllocated -= b->bytes;
      }
    }
    if (!b->wrapped) {
      delete[] b->data;
    }
    delete b;
  }
}

namespace occa {
  // ---[ exception ]-----------------------------------------------------------
  exception::exception(const std::string &message_) :
    message(message_) {}

  exception::exception(const exception &other) :
    std::exception(other),
    message(other.message) {}

  exception::~exception() throw() {}

  const char* exception::what() const throw() {
    return message.c_str();
  }

  gc::ringEntry_t::ringEntry_t() :
    leftRingEntry(this),
    rightRingEntry(this) {}

  // ---[ Mode class bodies ]---------------------------------------------------
  modeDevice_t::modeDevice_t(const std::string &mode_, const json &properties_) :
    mode(mode_),
    properties(properties_),
    bytesAllocated(0),
    maxBytesAllocated(0) {}

  void modeDevice_t::freeResources() {
    while (!kernels.empty()) {
      delete kernels.back();
    }
    while (!pools.empty()) {
      delete pools.back();
    }
    while (!buffers.empty()) {
      buffer_t *b = buffers.back();
      if (b->views.empty()) {
        releaseBuffer(b);
      } else {
        // Deleting the last view releases the buffer.
        while (!buffers.empty() && buffers.back() == b) {
          delete b->views.back();
        }
      }
    }
    while (!streams.empty()) {
      delete streams.back();
    }
    while (!tags.empty()) {
      delete tags.back();
    }
  }

  modeDevice_t::~modeDevice_t() {
    for (device *d : handles.handles) {
      d->modeDevice = NULL;
    }
    handles.handles.clear();
  }

  modeMemory_t::modeMemory_t(buffer_t *buffer_, const udim_t offset_, const udim_t size_) :
    buffer(buffer_),
    ptr(buffer_->data + offset_),
    size(size_),
    offset(offset_),
    dtype_(dtype::byte) {
    buffer->views.push_back(this);
  }

  modeMemory_t::~modeMemory_t() {
    for (memory *m : handles.handles) {
      m->modeMemory = NULL;
    }
    handles.handles.clear();
    if (buffer) {
      eraseValue(buffer->views, this);
      if (buffer->views.empty() && !buffer->pool) {
        releaseBuffer(buffer);
      }
      buffer = NULL;
    }
  }

  modeDevice_t* modeMemory_t::getModeDevice() const {
    return buffer ? buffer->modeDevice : NULL;
  }

  modeKernel_t::modeKernel_t(modeDevice_t *modeDevice_) :
    modeDevice(modeDevice_),
    sleepNs(0) {
    modeDevice->kernels.push_back(this);
  }

  modeKernel_t::~modeKernel_t() {
    for (kernel *k : handles.handles) {
      k->modeKernel = NULL;
    }
    handles.handles.clear();
    if (modeDevice) {
      eraseValue(modeDevice->kernels, this);
    }
  }

  void modeKernel_t::setArguments(const kernelArg *args, const int count) {
    arguments.clear();
    for (int i = 0; i < count; ++i) {
      arguments.insert(arguments.end(), args[i].args.begin(), args[i].args.end());
    }
  }

  // The mode "Queued", or any mode with the property queued, stands for an
  // asynchronous backend in the adapter's tests: kernels run in the launch,
  // on the host, as in Serial, but stream tags read as if each kernel had
  // been queued on its stream to run for the device property kernel_us
  // (50000 by default) once the stream is free, and a tag passed when its
  // stream got to it. No call waits. In mode CUDA, each such kernel also
  // goes to the fake CUPTI (fake_cupti.c) when the adapter has loaded it
  // (OCCA_TOOLS_CUPTI), as the CUDA driver would report it to CUPTI.
  static bool queued(const modeDevice_t *d) {
    return d->mode == "Queued" || d->properties.has("queued");
  }

  static modeStream_t *currentModeStream(modeDevice_t *d) {
    return d->currentStream.getModeStream();
  }

  static void reportToFakeCUPTI(double start, double end) {
    static void (*launch)(uint64_t, uint64_t) = [] {
      const char *path = getenv("OCCA_TOOLS_CUPTI");
      void *h = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
      return h ? reinterpret_cast<void (*)(uint64_t, uint64_t)>(dlsym(h, "fake_cupti_launch")) : nullptr;
    }();
    if (launch) {
      launch(uint64_t(start * 1e9), uint64_t(end * 1e9));
    }
  }

  static void queueKernel(modeDevice_t *d) {
    modeStream_t *s = currentModeStream(d);
    if (!s) {
      return;
    }
    const double us = d->properties.has("kernel_us") ? d->properties["kernel_us"].number() : 50000;
    const double start = std::max(monotonicSeconds(), s->queuedUntil);
    s->queuedUntil = start + us * 1e-6;
    if (d->mode == "CUDA") {
      reportToFakeCUPTI(start, s->queuedUntil);
    }
  }

  void modeKernel_t::launch() const {
    if (queued(modeDevice)) {
      queueKernel(modeDevice);
    }
    if (name == "addVectors") {
      if (arguments.size() != 4 || arguments[0].isPointer || arguments[0].modeMemory
          || !arguments[1].modeMemory || !arguments[2].modeMemory || !arguments[3].modeMemory) {
        fail("addVectors takes (int n, memory a, memory b, memory ab)");
      }
      const int64_t n = arguments[0].value.int_;
      const modeMemory_t *a = arguments[1].modeMemory;
      const modeMemory_t *b = arguments[2].modeMemory;
      modeMemory_t *ab = arguments[3].modeMemory;
      const udim_t bytes = (udim_t) n * sizeof(float);
      if (n < 0 || a->size < bytes || b->size < bytes || ab->size < bytes) {
        fail("addVectors: n is larger than an array");
      }
      const float *pa = (const float*) a->ptr;
      const float *pb = (const float*) b->ptr;
      float *pab = (float*) ab->ptr;
      for (int64_t i = 0; i < n; ++i) {
        pab[i] = pa[i] + pb[i];
      }
    }
    sleepNanoseconds(sleepNs);
  }

  modeMemoryPool_t::modeMemoryPool_t(modeDevice_t *modeDevice_, const json &properties_) :
    modeDevice(modeDevice_),
    properties(properties_),
    storage(NULL),
    alignment(128) {
    storage = new buffer_t();
    storage->modeDevice = modeDevice;
    storage->pool = this;
    storage->data = new char[1]();
    storage->bytes = 0;
    storage->properties = properties_;
    modeDevice->pools.push_back(this);
  }

  modeMemoryPool_t::~modeMemoryPool_t() {
    for (memoryPool *p : handles.handles) {
      p->modeMemoryPool = NULL;
    }
    handles.handles.clear();
    // Reservations die with their pool.
    while (!storage->views.empty()) {
      delete storage->views.back();
    }
    releaseBuffer(storage);
    if (modeDevice) {
      eraseValue(modeDevice->pools, this);
    }
  }

  udim_t modeMemoryPool_t::reservedBytes() const {
    udim_t total = 0;
    for (const modeMemory_t *m : storage->views) {
      total += m->size;
    }
    return total;
  }

  // Grows (or shrinks) the storage; reservations keep their offsets.
  void modeMemoryPool_t::resize(const udim_t bytes) {
    udim_t end = 0;
    for (const modeMemory_t *m : storage->views) {
      end = std::max(end, m->offset + m->size);
    }
    if (bytes < end) {
      fail("memoryPool::resize: " + std::to_string(bytes)
           + " bytes is less than the reservations' extent (" + std::to_string(end) + ")");
    }
    if (bytes == storage->bytes) {
      return;
    }
    char *data = new char[bytes ? bytes : 1]();
    std::memcpy(data, storage->data, std::min(bytes, storage->bytes));
    delete[] storage->data;
    storage->data = data;
    modeDevice->bytesAllocated += bytes;
    modeDevice->bytesAllocated -= storage->bytes;
    modeDevice->maxBytesAllocated = std::max(modeDevice->maxBytesAllocated,
                                             modeDevice->bytesAllocated);
    storage->bytes = bytes;
    for (modeMemory_t *m : storage->views) {
      m->ptr = data + m->offset;
    }
  }

  // First fit over the reservations sorted by offset, each rounded up to the
  // alignment; the pool grows when nothing fits.
  modeMemory_t* modeMemoryPool_t::reserve(const udim_t bytes) {
    std::vector<modeMemory_t*> sorted(storage->views);
    std::sort(sorted.begin(), sorted.end(),
              [](const modeMemory_t *x, const modeMemory_t *y) { return x->offset < y->offset; });
    udim_t offset = 0;
    for (const modeMemory_t *m : sorted) {
      if (m->offset >= offset + bytes) {
        break;
      }
      const udim_t end = ((m->offset + m->size + alignment - 1) / alignment) * alignment;
      offset = std::max(offset, end);
    }
    if (offset + bytes > storage->bytes) {
      resize(((offset + bytes + alignment - 1) / alignment) * alignment);
    }
    return new hostMemory(storage, offset, bytes);
  }

  modeStream_t::modeStream_t(modeDevice_t *modeDevice_, const json &properties_) :
    modeDevice(modeDevice_),
    properties(properties_),
    queuedUntil(0) {
    modeDevice->streams.push_back(this);
  }

  modeStream_t::~modeStream_t() {
    for (stream *s : handles.handles) {
      s->modeStream = NULL;
    }
    handles.handles.clear();
    if (modeDevice) {
      eraseValue(modeDevice->streams, this);
    }
  }

  modeStreamTag_t::modeStreamTag_t(modeDevice_t *modeDevice_, const double seconds_) :
    modeDevice(modeDevice_),
    seconds(seconds_) {
    modeDevice->tags.push_back(this);
  }

  modeStreamTag_t::~modeStreamTag_t() {
    for (streamTag *t : handles.handles) {
      t->modeStreamTag = NULL;
    }
    handles.handles.clear();
    if (modeDevice) {
      eraseValue(modeDevice->tags, this);
    }
  }

  // ---[ dtype_t ]-------------------------------------------------------------
  dtype_t::dtype_t() :
    bytes_(0) {}

  dtype_t::dtype_t(const std::string &name__, const int bytes__, const bool registered_) :
    name_(name__),
    bytes_(bytes__) {
    (void) registered_;
  }

  dtype_t::dtype_t(const dtype_t &other) :
    name_(other.name_),
    bytes_(other.bytes_) {}

  dtype_t& dtype_t::operator = (const dtype_t &other_) {
    name_ = other_.name_;
    bytes_ = other_.bytes_;
    return *this;
  }

  dtype_t::~dtype_t() {}

  const std::string& dtype_t::name() const {
    return name_;
  }

  int dtype_t::bytes() const {
    return bytes_;
  }

  bool dtype_t::operator == (const dtype_t &other) const {
    return name_ == other.name_ && bytes_ == other.bytes_;
  }

  bool dtype_t::operator != (const dtype_t &other) const {
    return !(*this == other);
  }

  namespace dtype {
    const dtype_t none("none", 0);
    const dtype_t void_("void", 0);
    const dtype_t byte("byte", 1);
    const dtype_t bool_("bool", (int) sizeof(bool));
    const dtype_t char_("char", (int) sizeof(char));
    const dtype_t short_("short", (int) sizeof(short));
    const dtype_t int_("int", (int) sizeof(int));
    const dtype_t long_("long", (int) sizeof(long));
    const dtype_t float_("float", (int) sizeof(float));
    const dtype_t double_("double", (int) sizeof(double));
    const dtype_t int8("int8", 1);
    const dtype_t uint8("uint8", 1);
    const dtype_t int16("int16", 2);
    const dtype_t uint16("uint16", 2);
    const dtype_t int32("int32", 4);
    const dtype_t uint32("uint32", 4);
    const dtype_t int64("int64", 8);
    const dtype_t uint64("uint64", 8);

    template <> dtype_t get<void>() { return void_; }
    template <> dtype_t get<bool>() { return bool_; }
    template <> dtype_t get<char>() { return char_; }
    template <> dtype_t get<signed char>() { return char_; }
    template <> dtype_t get<unsigned char>() { return uint8; }
    template <> dtype_t get<short>() { return short_; }
    template <> dtype_t get<unsigned short>() { return uint16; }
    template <> dtype_t get<int>() { return int_; }
    template <> dtype_t get<unsigned int>() { return uint32; }
    template <> dtype_t get<long>() { return long_; }
    template <> dtype_t get<unsigned long>() { return uint64; }
    template <> dtype_t get<long long>() { return int64; }
    template <> dtype_t get<unsigned long long>() { return uint64; }
    template <> dtype_t get<float>() { return float_; }
    template <> dtype_t get<double>() { return double_; }
  }

  // ---[ json ]----------------------------------------------------------------
  json::json() :
    type(none_),
    boolValue(false),
    numberValue(0) {}

  json::json(const json &other) :
    type(other.type),
    boolValue(other.boolValue),
    numberValue(other.numberValue),
    stringValue(other.stringValue),
    arrayValue(other.arrayValue),
    objectValue(other.objectValue) {}

  json::json(const bool value) :
    type(boolean_), boolValue(value), numberValue(0) {}

  json::json(const int32_t value) :
    type(number_), boolValue(false), numberValue((double) value) {}

  json::json(const uint32_t value) :
    type(number_), boolValue(false), numberValue((double) value) {}

  json::json(const int64_t value) :
    type(number_), boolValue(false), numberValue((double) value) {}

  json::json(const uint64_t value) :
    type(number_), boolValue(false), numberValue((double) value) {}

  json::json(const float value) :
    type(number_), boolValue(false), numberValue((double) value) {}

  json::json(const double value) :
    type(number_), boolValue(false), numberValue(value) {}

  json::json(const char *value) :
    type(string_), boolValue(false), numberValue(0), stringValue(value ? value : "") {}

  json::json(const std::string &value) :
    type(string_), boolValue(false), numberValue(0), stringValue(value) {}

  json::json(std::initializer_list<jsonKeyValue> entries) :
    type(object_), boolValue(false), numberValue(0) {
    for (const jsonKeyValue &kv : entries) {
      (*this)[kv.name] = kv.value;
    }
  }

  json::~json() {}

  json& json::operator = (const json &other) {
    if (this != &other) {
      // other may live inside this value: copy it first.
      json copy(other);
      type = copy.type;
      boolValue = copy.boolValue;
      numberValue = copy.numberValue;
      stringValue.swap(copy.stringValue);
      arrayValue.swap(copy.arrayValue);
      objectValue.swap(copy.objectValue);
    }
    return *this;
  }

  namespace {
    struct jsonParser {
      const char *c;

      explicit jsonParser(const char *c_) : c(c_) {}

      [[noreturn]] void error(const std::string &what) {
        fail("json: " + what + " at \"" + std::string(c).substr(0, 20) + "\"");
      }

      void skipSpace() {
        while (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r') {
          ++c;
        }
      }

      static bool isWordChar(char ch) {
        return (('a' <= ch && ch <= 'z') || ('A' <= ch && ch <= 'Z')
                || ('0' <= ch && ch <= '9') || ch == '_' || ch == '-'
                || ch == '.' || ch == '/' || ch == '+');
      }

      std::string quoted() {
        const char quote = *c++;
        std::string out;
        while (*c && *c != quote) {
          if (*c == '\\') {
            ++c;
            switch (*c) {
              case 'n': out += '\n'; break;
              case 't': out += '\t'; break;
              case 'r': out += '\r'; break;
              case 'b': out += '\b'; break;
              case 'f': out += '\f'; break;
              case '\0': error("unterminated string");
              default: out += *c; break;
            }
            ++c;
          } else {
            out += *c++;
          }
        }
        if (*c != quote) {
          error("unterminated string");
        }
        ++c;
        return out;
      }

      std::string word() {
        const char *start = c;
        while (isWordChar(*c)) {
          ++c;
        }
        return std::string(start, c);
      }

      std::string key() {
        skipSpace();
        if (*c == '"' || *c == '\'') {
          return quoted();
        }
        std::string k = word();
        if (k.empty()) {
          error("expected a key");
        }
        return k;
      }

      // Entries up to the closing brace.
      void objectBody(json &out, const char end) {
        out = json();
        out.type = json::object_;
        while (true) {
          skipSpace();
          if (*c == end) {
            return;
          }
          const std::string k = key();
          skipSpace();
          if (*c != ':') {
            error("expected ':'");
          }
          ++c;
          json v;
          value(v);
          out.objectValue[k] = v;
          skipSpace();
          if (*c == ',') {
            ++c;
          } else if (*c != end) {
            error("expected ',' or the end of the object");
          }
        }
      }

      void value(json &out) {
        skipSpace();
        if (*c == '{') {
          ++c;
          objectBody(out, '}');
          ++c;
        } else if (*c == '[') {
          ++c;
          out = json();
          out.type = json::array_;
          while (true) {
            skipSpace();
            if (*c == ']') {
              ++c;
              break;
            }
            json v;
            value(v);
            out.arrayValue.push_back(v);
            skipSpace();
            if (*c == ',') {
              ++c;
            } else if (*c != ']') {
              error("expected ',' or ']'");
            }
          }
        } else if (*c == '"' || *c == '\'') {
          out = json(quoted());
        } else {
          const std::string w = word();
          if (w == "true") {
            out = json(true);
          } else if (w == "false") {
            out = json(false);
          } else if (w == "null") {
            out = json();
            out.type = json::null_;
          } else {
            char *end = NULL;
            const double d = strtod(w.c_str(), &end);
            if (w.empty() || *end != '\0') {
              error("unexpected value");
            }
            out = json(d);
          }
        }
      }

      // A whole document: one value (as in OCCA, an object needs its braces:
      // "mode: 'Serial'" alone is an error).
      json document() {
        json out;
        skipSpace();
        if (*c == '\0') {
          return out;
        }
        value(out);
        skipSpace();
        if (*c != '\0') {
          error("trailing characters");
        }
        return out;
      }
    };

    void dumpString(std::string &out, const std::string &s) {
      out += '"';
      for (char ch : s) {
        switch (ch) {
          case '"': out += "\\\""; break;
          case '\\': out += "\\\\"; break;
          case '\n': out += "\\n"; break;
          case '\t': out += "\\t"; break;
          case '\r': out += "\\r"; break;
          default:
            if ((unsigned char) ch < 0x20) {
              char buf[8];
              snprintf(buf, sizeof(buf), "\\u%04x", (unsigned) (unsigned char) ch);
              out += buf;
            } else {
              out += ch;
            }
        }
      }
      out += '"';
    }

    void dumpValue(std::string &out, const json &j, const int indent, const int depth) {
      const std::string pad = indent > 0 ? std::string((size_t) (indent * (depth + 1)), ' ') : "";
      const std::string endPad = indent > 0 ? std::string((size_t) (indent * depth), ' ') : "";
      const char *newline = indent > 0 ? "\n" : "";
      switch (j.type) {
        case json::none_:
        case json::null_:
          out += "null";
          break;
        case json::boolean_:
          out += j.boolValue ? "true" : "false";
          break;
        case json::number_: {
          char buf[32];
          const double d = j.numberValue;
          if (d == (double) (int64_t) d && d > -1e15 && d < 1e15) {
            snprintf(buf, sizeof(buf), "%lld", (long long) d);
          } else {
            snprintf(buf, sizeof(buf), "%.17g", d);
          }
          out += buf;
          break;
        }
        case json::string_:
          dumpString(out, j.stringValue);
          break;
        case json::array_: {
          if (j.arrayValue.empty()) {
            out += "[]";
            break;
          }
          out += "[";
          out += newline;
          for (size_t i = 0; i < j.arrayValue.size(); ++i) {
            out += pad;
            dumpValue(out, j.arrayValue[i], indent, depth + 1);
            if (i + 1 < j.arrayValue.size()) {
              out += indent > 0 ? "," : ", ";
            }
            out += newline;
          }
          out += endPad + "]";
          break;
        }
        case json::object_: {
          if (j.objectValue.empty()) {
            out += "{}";
            break;
          }
          out += "{";
          out += newline;
          size_t i = 0;
          for (const auto &kv : j.objectValue) {
            out += pad;
            dumpString(out, kv.first);
            out += ": ";
            dumpValue(out, kv.second, indent, depth + 1);
            if (++i < j.objectValue.size()) {
              out += indent > 0 ? "," : ", ";
            }
            out += newline;
          }
          out += endPad + "}";
          break;
        }
      }
    }

    std::vector<std::string> splitPath(const std::string &key) {
      std::vector<std::string> parts;
      std::string part;
      std::stringstream ss(key);
      while (std::getline(ss, part, '/')) {
        if (!part.empty()) {
          parts.push_back(part);
        }
      }
      return parts;
    }
  }

  json json::parse(const char *&c) {
    jsonParser p(c ? c : "");
    json out = p.document();
    if (c) {
      c = p.c;
    }
    return out;
  }

  json json::parse(const std::string &s) {
    const char *c = s.c_str();
    return parse(c);
  }

  std::string json::dump(const int indent) const {
    std::string out;
    dumpValue(out, *this, indent, 0);
    return out;
  }

  bool json::isInitialized() const { return type != none_; }
  bool json::isNull() const { return type == null_; }
  bool json::isBool() const { return type == boolean_; }
  bool json::isNumber() const { return type == number_; }
  bool json::isString() const { return type == string_; }
  bool json::isArray() const { return type == array_; }
  bool json::isObject() const { return type == object_; }

  bool json::has(const std::string &key) const {
    const json *j = this;
    for (const std::string &part : splitPath(key)) {
      if (j->type != object_) {
        return false;
      }
      std::map<std::string, json>::const_iterator it = j->objectValue.find(part);
      if (it == j->objectValue.end()) {
        return false;
      }
      j = &it->second;
    }
    return true;
  }

  json& json::operator [] (const char *key) {
    json *j = this;
    for (const std::string &part : splitPath(key ? key : "")) {
      if (j->type != object_) {
        *j = json();
        j->type = object_;
      }
      j = &j->objectValue[part];
    }
    return *j;
  }

  const json& json::operator [] (const char *key) const {
    const json *j = this;
    for (const std::string &part : splitPath(key ? key : "")) {
      if (j->type != object_) {
        return noneJson();
      }
      std::map<std::string, json>::const_iterator it = j->objectValue.find(part);
      if (it == j->objectValue.end()) {
        return noneJson();
      }
      j = &it->second;
    }
    return *j;
  }

  json& json::operator [] (const std::string &key) {
    return (*this)[key.c_str()];
  }

  const json& json::operator [] (const std::string &key) const {
    return (*this)[key.c_str()];
  }

  int json::size() const {
    switch (type) {
      case array_: return (int) arrayValue.size();
      case object_: return (int) objectValue.size();
      case string_: return (int) stringValue.size();
      default: return 0;
    }
  }

  bool json::boolean() const {
    switch (type) {
      case boolean_: return boolValue;
      case number_: return numberValue != 0;
      case string_: return stringValue == "true";
      default: return false;
    }
  }

  double json::number() const {
    switch (type) {
      case number_: return numberValue;
      case boolean_: return boolValue ? 1 : 0;
      case string_: return strtod(stringValue.c_str(), NULL);
      default: return 0;
    }
  }

  const std::string& json::string() const {
    static const std::string empty;
    return type == string_ ? stringValue : empty;
  }

  json::operator bool () const { return boolean(); }
  json::operator int32_t () const { return (int32_t) number(); }
  json::operator int64_t () const { return (int64_t) number(); }
  json::operator double () const { return number(); }

  json::operator std::string () const {
    return type == string_ ? stringValue : dump(0);
  }

  jsonKeyValue::jsonKeyValue(const std::string &name_, const bool value_) : name(name_), value(value_) {}
  jsonKeyValue::jsonKeyValue(const std::string &name_, const int32_t value_) : name(name_), value(value_) {}
  jsonKeyValue::jsonKeyValue(const std::string &name_, const uint32_t value_) : name(name_), value(value_) {}
  jsonKeyValue::jsonKeyValue(const std::string &name_, const int64_t value_) : name(name_), value(value_) {}
  jsonKeyValue::jsonKeyValue(const std::string &name_, const uint64_t value_) : name(name_), value(value_) {}
  jsonKeyValue::jsonKeyValue(const std::string &name_, const float value_) : name(name_), value(value_) {}
  jsonKeyValue::jsonKeyValue(const std::string &name_, const double value_) : name(name_), value(value_) {}
  jsonKeyValue::jsonKeyValue(const std::string &name_, const char *value_) : name(name_), value(value_) {}
  jsonKeyValue::jsonKeyValue(const std::string &name_, const std::string &value_) : name(name_), value(value_) {}
  jsonKeyValue::jsonKeyValue(const std::string &name_, const json &value_) : name(name_), value(value_) {}
  jsonKeyValue::jsonKeyValue(const std::string &name_, std::initializer_list<jsonKeyValue> value_) :
    name(name_), value(value_) {}

  // ---[ kernelArg ]-----------------------------------------------------------
  kernelArgData::kernelArgData() :
    size(0),
    isPointer(false),
    modeMemory(NULL) {
    value.uint_ = 0;
  }

  namespace {
    kernelArgData signedArg(const int64_t v, const udim_t size) {
      kernelArgData d;
      d.value.int_ = v;
      d.size = size;
      return d;
    }

    kernelArgData unsignedArg(const uint64_t v, const udim_t size) {
      kernelArgData d;
      d.value.uint_ = v;
      d.size = size;
      return d;
    }

    kernelArgData pointerArg(const void *p) {
      kernelArgData d;
      d.value.ptr_ = const_cast<void*>(p);
      d.size = sizeof(void*);
      d.isPointer = true;
      return d;
    }
  }

  kernelArg::kernelArg() {}
  kernelArg::kernelArg(const kernelArg &other) : args(other.args) {}

  kernelArg& kernelArg::operator = (const kernelArg &other) {
    args = other.args;
    return *this;
  }

  kernelArg::~kernelArg() {}

  kernelArg::kernelArg(const bool arg) { args.push_back(unsignedArg(arg ? 1 : 0, sizeof(bool))); }
  kernelArg::kernelArg(const char arg) { args.push_back(signedArg(arg, 1)); }
  kernelArg::kernelArg(const signed char arg) { args.push_back(signedArg(arg, 1)); }
  kernelArg::kernelArg(const unsigned char arg) { args.push_back(unsignedArg(arg, 1)); }
  kernelArg::kernelArg(const short arg) { args.push_back(signedArg(arg, sizeof(short))); }
  kernelArg::kernelArg(const unsigned short arg) { args.push_back(unsignedArg(arg, sizeof(short))); }
  kernelArg::kernelArg(const int arg) { args.push_back(signedArg(arg, sizeof(int))); }
  kernelArg::kernelArg(const unsigned int arg) { args.push_back(unsignedArg(arg, sizeof(int))); }
  kernelArg::kernelArg(const long arg) { args.push_back(signedArg(arg, sizeof(long))); }
  kernelArg::kernelArg(const unsigned long arg) { args.push_back(unsignedArg(arg, sizeof(long))); }
  kernelArg::kernelArg(const long long arg) { args.push_back(signedArg(arg, sizeof(long long))); }
  kernelArg::kernelArg(const unsigned long long arg) { args.push_back(unsignedArg(arg, sizeof(long long))); }

  kernelArg::kernelArg(const float arg) {
    kernelArgData d;
    d.value.float_ = arg;
    d.size = sizeof(float);
    args.push_back(d);
  }

  kernelArg::kernelArg(const double arg) {
    kernelArgData d;
    d.value.double_ = arg;
    d.size = sizeof(double);
    args.push_back(d);
  }

  kernelArg::kernelArg(void *arg) { args.push_back(pointerArg(arg)); }
  kernelArg::kernelArg(const void *arg) { args.push_back(pointerArg(arg)); }

  // A memory argument keeps the mode object, not a counted handle: passing a
  // memory to a kernel does not keep it alive (as in OCCA).
  kernelArg::kernelArg(const memory &arg) {
    kernelArgData d;
    d.modeMemory = arg.modeMemory;
    d.value.ptr_ = arg.modeMemory ? arg.modeMemory->ptr : NULL;
    d.size = sizeof(void*);
    d.isPointer = true;
    args.push_back(d);
  }

  int kernelArg::size() const {
    return (int) args.size();
  }

  const kernelArgData& kernelArg::operator [] (const int index) const {
    return args.at((size_t) index);
  }

  // ---[ settings ]------------------------------------------------------------
  json& settings() {
    static json s = [] {
      json j;
#if OCCA_STANDIN_VERSION == 10100
      j["version"] = "1.0.9";  // OCCA 1.1.0 calls itself 1.0.9
#else
      j["version"] = std::to_string(OCCA_STANDIN_VERSION / 10000) + "."
        + std::to_string(OCCA_STANDIN_VERSION / 100 % 100) + "."
        + std::to_string(OCCA_STANDIN_VERSION % 100);
#endif
      return j;
    }();
    return s;
  }

#if OCCA_STANDIN_VERSION < 10200
  properties::properties() {}
  properties::properties(const json &other) : json(other) {}
  properties::properties(const char *text) : json(json::parse(text)) {}
  properties::properties(const std::string &text) : json(json::parse(text)) {}
#endif

  // ---[ device ]--------------------------------------------------------------
  device::device() :
    modeDevice(NULL) {}

  device::device(const std::string &props) :
    device(occa::OCCA_STANDIN_PROPS(json::parse(props))) {}

  device::device(const occa::OCCA_STANDIN_PROPS &props) :
    modeDevice(NULL) {
    setup(props);
  }

  device::device(modeDevice_t *modeDevice_) :
    modeDevice(NULL) {
    setModeDevice(modeDevice_);
  }

  device::device(jsonInitializerList initializer) :
    device(occa::OCCA_STANDIN_PROPS(json(initializer))) {}

  device::device(const occa::device &other) :
    gc::ringEntry_t(),
    modeDevice(NULL) {
    setModeDevice(other.modeDevice);
  }

  device& device::operator = (const occa::device &other) {
    setModeDevice(other.modeDevice);
    return *this;
  }

  device::~device() {
    removeDeviceRef();
  }

  void device::assertInitialized() const {
    if (!modeDevice) {
      fail("device is not initialized or has been freed");
    }
  }

  void device::setModeDevice(modeDevice_t *modeDevice_) {
    if (modeDevice == modeDevice_) {
      return;
    }
    removeDeviceRef();
    modeDevice = modeDevice_;
    if (modeDevice) {
      modeDevice->handles.add(this);
    }
  }

  void device::removeDeviceRef() {
    if (!modeDevice) {
      return;
    }
    if (modeDevice->handles.remove(this)) {
      free();
    }
    modeDevice = NULL;
  }

  void device::dontUseRefs() {
    if (modeDevice) {
      modeDevice->handles.stopCounting();
    }
  }

  bool device::operator == (const occa::device &other) const {
    return modeDevice == other.modeDevice;
  }

  bool device::operator != (const occa::device &other) const {
    return modeDevice != other.modeDevice;
  }

  bool device::isInitialized() const {
    return modeDevice != NULL;
  }

  modeDevice_t* device::getModeDevice() const {
    return modeDevice;
  }

#if OCCA_STANDIN_VERSION >= 10200
  void device::setup(const std::string &props) {
    setup(json::parse(props));
  }
#endif

  void device::setup(const occa::OCCA_STANDIN_PROPS &props) {
    free();
    const std::string mode_ = props.has("mode") ? props["mode"].string() : std::string("Serial");
    setModeDevice(new hostDevice(mode_.empty() ? std::string("Serial") : mode_, props));
    // The initial stream.
    setStream(createStream());
  }

  void device::free() {
    if (!modeDevice) {
      return;
    }
    modeDevice_t *m = modeDevice;
    m->freeResources();
    // The destructor makes every handle, this one included, uninitialized.
    delete m;
    modeDevice = NULL;
  }

  const std::string& device::mode() const {
    static const std::string noMode = "No Mode";
    return modeDevice ? modeDevice->mode : noMode;
  }

  const occa::json& device::properties() const {
    return modeDevice ? modeDevice->properties : noneJson();
  }

  udim_t device::memoryAllocated() const {
    return modeDevice ? modeDevice->bytesAllocated : 0;
  }

  udim_t device::maxMemoryAllocated() const {
    return modeDevice ? modeDevice->maxBytesAllocated : 0;
  }

  void device::finish() {
    if (modeDevice) {
      // Host execution is synchronous: nothing to wait for. (OCCA asks the
      // current stream's mode object to finish; it does not call
      // stream::finish().)
      (void) modeDevice->currentStream.getModeStream();
    }
  }

#if OCCA_STANDIN_VERSION >= 10400
  void device::finishAll() {
    if (modeDevice) {
      (void) modeDevice->currentStream.getModeStream();
    }
  }
#endif

  bool device::hasSeparateMemorySpace() {
    return false;
  }

  stream device::createStream(const occa::OCCA_STANDIN_PROPS &props) {
    assertInitialized();
    return stream(new hostStream(modeDevice, props));
  }

  stream device::getStream() {
    assertInitialized();
    return modeDevice->currentStream;
  }

  void device::setStream(stream s) {
    assertInitialized();
    modeDevice->currentStream = s;
  }

  streamTag device::tagStream() {
    assertInitialized();
    double seconds = monotonicSeconds();
    if (queued(modeDevice) && currentModeStream(modeDevice)) {
      seconds = std::max(seconds, currentModeStream(modeDevice)->queuedUntil);
    }
    return streamTag(new modeStreamTag_t(modeDevice, seconds));
  }

  void device::waitFor(streamTag tag) {
    assertInitialized();
    if (!tag.isInitialized()) {
      fail("waitFor: the stream tag is not initialized");
    }
  }

  double device::timeBetween(const streamTag &startTag, const streamTag &endTag) {
    assertInitialized();
    if (!startTag.modeStreamTag || !endTag.modeStreamTag) {
      fail("timeBetween: a stream tag is not initialized");
    }
    return endTag.modeStreamTag->seconds - startTag.modeStreamTag->seconds;
  }

  occa::kernel device::buildKernel(const std::string &filename,
                                   const std::string &kernelName,
                                   const occa::OCCA_STANDIN_PROPS &props) const {
    assertInitialized();
    std::string source;
    if (!readFile(filename, source)) {
      fail("cannot read kernel source " + filename + ": " + strerror(errno));
    }
#ifdef OCCA_STANDIN_NEKRS
    // nekRS's split build: build/compile_only compiles (an empty kernel
    // name: every kernel of the file) and returns an empty kernel;
    // build/load_only needs the binary a compile made. Neither flag is part
    // of the cache key.
    const bool compileOnly = props["build/compile_only"].boolean();
    const bool loadOnly = props["build/load_only"].boolean();
    json key = props;
    if (key.has("build")) {
      key["build"].objectValue.erase("compile_only");
      key["build"].objectValue.erase("load_only");
      if (key["build"].objectValue.empty()) {
        key.objectValue.erase("build");
      }
    }
    const std::string hash = hexHash(source, key.dump(0), modeDevice->mode);
#else
    const bool compileOnly = false, loadOnly = false;
    const std::string hash = hexHash(source, props.dump(0), modeDevice->mode);
#endif
    const std::string dir = cacheRoot() + "/cache/" + hash;
    const std::string binary = dir + "/binary";
    if (loadOnly && !fileExists(binary)) {
      fail("build/load_only: no binary for " + filename + " at " + binary);
    }
    if (!fileExists(binary)) {
      // A cold build: "compile", then store the binary.
      makeDirs(dir);
      sleepNanoseconds(2000000);
      writeFileAtomically(binary, "occa-standin binary\nsource: " + filename
                          + "\nproperties: " + props.dump(0) + "\n");
    }
    if (compileOnly) {
      return kernel();
    }
    modeKernel_t *k = new hostKernel(modeDevice);
    k->name = kernelName;
    k->sourceFilename = filename;
    k->binaryFilename = binary;
    k->properties = props;
    k->sleepNs = props.has("sleep_ns") ? (int64_t) props["sleep_ns"].number() : 0;
    return kernel(k);
  }

  occa::kernel device::buildKernelFromString(const std::string &content,
                                             const std::string &kernelName,
                                             const occa::OCCA_STANDIN_PROPS &props) const {
    assertInitialized();
    const std::string dir = cacheRoot() + "/cache/" + hexHash(content, props.dump(0), "string");
    const std::string sourceFile = dir + "/string_source.okl";
    std::string existing;
    if (!readFile(sourceFile, existing) || existing != content) {
      makeDirs(dir);
      writeFileAtomically(sourceFile, content);
    }
    return buildKernel(sourceFile, kernelName, props);
  }

  occa::memory device::malloc(const dim_t entries,
                              const dtype_t &dtype,
                              const void *src,
                              const occa::OCCA_STANDIN_PROPS &props) {
    assertInitialized();
    if (entries == 0) {
      return memory();
    }
    const dim_t bytes = entries * dtype.bytes();
    if (bytes < 0) {
      fail("malloc: negative size (" + std::to_string(bytes) + " bytes)");
    }
    memory mem(modeDevice->allocate((udim_t) bytes, src, props));
    mem.setDtype(dtype);
    return mem;
  }

  occa::memory device::malloc(const dim_t entries,
                              const dtype_t &dtype,
                              const occa::memory src,
                              const occa::OCCA_STANDIN_PROPS &props) {
    memory mem = malloc(entries, dtype, NULL, props);
    if (entries && src.size()) {
      mem.copyFrom(src);
    }
    return mem;
  }

  occa::memory device::malloc(const dim_t entries,
                              const dtype_t &dtype,
                              const occa::OCCA_STANDIN_PROPS &props) {
    return malloc(entries, dtype, NULL, props);
  }

  template <>
  occa::memory device::malloc<void>(const dim_t entries,
                                    const void *src,
                                    const occa::OCCA_STANDIN_PROPS &props) {
    return malloc(entries, dtype::byte, src, props);
  }

  template <>
  occa::memory device::malloc<void>(const dim_t entries,
                                    const occa::memory src,
                                    const occa::OCCA_STANDIN_PROPS &props) {
    return malloc(entries, dtype::byte, src, props);
  }

  template <>
  occa::memory device::malloc<void>(const dim_t entries,
                                    const occa::OCCA_STANDIN_PROPS &props) {
    return malloc(entries, dtype::byte, NULL, props);
  }

#if OCCA_STANDIN_VERSION >= 20000
  occa::memory device::wrapMemory(const void *ptr,
                                  const dim_t entries,
                                  const dtype_t &dtype,
                                  const occa::json &props) {
    assertInitialized();
    const dim_t bytes = entries * dtype.bytes();
    if (!ptr || bytes <= 0) {
      fail("wrapMemory: no memory to wrap (" + std::to_string(bytes) + " bytes)");
    }
    occa::buffer_t *b = new occa::buffer_t();
    b->modeDevice = modeDevice;
    b->pool = NULL;
    b->wrapped = true;
    b->data = (char*) ptr;
    b->bytes = (udim_t) bytes;
    b->properties = props;
    modeDevice->buffers.push_back(b);
    memory mem(new hostMemory(b, 0, (udim_t) bytes));
    mem.setDtype(dtype);
    return mem;
  }
#endif

  memoryPool device::createMemoryPool(const occa::OCCA_STANDIN_PROPS &props) {
    assertInitialized();
    return memoryPool(new modeMemoryPool_t(modeDevice, props));
  }

  // ---[ kernel ]--------------------------------------------------------------
#ifdef OCCA_STANDIN_NEKRS
  static_assert(sizeof(kernel) == 128, "nekRS's kernel handle is 128 bytes");

  kernel::hash_t::hash_t() :
    initialized(false) {
    for (int i = 0; i < 8; ++i) {
      h[i] = 0;
      sh[i] = 0;
    }
  }
#endif

#ifdef OCCA_STANDIN_KERNEL_PAD
#define OCCA_STANDIN_CLEAR_PAD() std::memset(pad_, 0, sizeof(pad_))
#else
#define OCCA_STANDIN_CLEAR_PAD()
#endif

  kernel::kernel() :
    modeKernel(NULL) {
    OCCA_STANDIN_CLEAR_PAD();
  }

  kernel::kernel(modeKernel_t *modeKernel_) :
    modeKernel(NULL) {
    OCCA_STANDIN_CLEAR_PAD();
    setModeKernel(modeKernel_);
  }

  kernel::kernel(const kernel &k) :
    gc::ringEntry_t(),
    modeKernel(NULL) {
    OCCA_STANDIN_CLEAR_PAD();
    setModeKernel(k.modeKernel);
  }

  kernel& kernel::operator = (const kernel &k) {
    setModeKernel(k.modeKernel);
    return *this;
  }

  kernel& kernel::operator = (modeKernel_t *modeKernel_) {
    setModeKernel(modeKernel_);
    return *this;
  }

  kernel::~kernel() {
    removeKernelRef();
  }

  void kernel::assertInitialized() const {
    if (!modeKernel) {
      fail("kernel is not initialized or has been freed");
    }
  }

  void kernel::setModeKernel(modeKernel_t *modeKernel_) {
    if (modeKernel == modeKernel_) {
      return;
    }
    removeKernelRef();
    modeKernel = modeKernel_;
    if (modeKernel) {
      modeKernel->handles.add(this);
    }
  }

  void kernel::removeKernelRef() {
    if (!modeKernel) {
      return;
    }
    modeKernel_t *k = modeKernel;
    modeKernel = NULL;
    if (k->handles.remove(this)) {
      delete k;
    }
  }

  void kernel::dontUseRefs() {
    if (modeKernel) {
      modeKernel->handles.stopCounting();
    }
  }

  bool kernel::isInitialized() {
    return modeKernel != NULL;
  }

  const std::string& kernel::mode() const {
    static const std::string noMode = "No Mode";
    return (modeKernel && modeKernel->modeDevice) ? modeKernel->modeDevice->mode : noMode;
  }

  const occa::json& kernel::properties() const {
    return modeKernel ? modeKernel->properties : noneJson();
  }

  modeKernel_t* kernel::getModeKernel() const {
    return modeKernel;
  }

  occa::device kernel::getDevice() {
    return occa::device(modeKernel ? modeKernel->modeDevice : NULL);
  }

  bool kernel::operator == (const occa::kernel &other) const {
    return modeKernel == other.modeKernel;
  }

  bool kernel::operator != (const occa::kernel &other) const {
    return modeKernel != other.modeKernel;
  }

  const std::string& kernel::name() {
    static const std::string noName;
    return modeKernel ? modeKernel->name : noName;
  }

  const std::string& kernel::sourceFilename() {
    static const std::string none;
    return modeKernel ? modeKernel->sourceFilename : none;
  }

  const std::string& kernel::binaryFilename() {
    static const std::string none;
    return modeKernel ? modeKernel->binaryFilename : none;
  }

  void kernel::pushArg(const kernelArg &arg) {
    assertInitialized();
    modeKernel->arguments.insert(modeKernel->arguments.end(), arg.args.begin(), arg.args.end());
  }

  void kernel::clearArgs() {
    assertInitialized();
    modeKernel->arguments.clear();
  }

  void kernel::run() const {
    assertInitialized();
    modeKernel->launch();
  }

#if OCCA_STANDIN_VERSION >= 10200
  void kernel::run(std::initializer_list<kernelArg> args) const {
    kernel &self = const_cast<kernel&>(*this);
    self.clearArgs();
    for (const kernelArg &arg : args) {
      self.pushArg(arg);
    }
#ifdef OCCA_STANDIN_NEKRS
    // run() inlined, as a clang-built libocca does: no call to run().
    assertInitialized();
    modeKernel->launch();
#else
    self.run();
#endif
  }
#endif

  void kernel::operator () () const {
    assertInitialized();
    modeKernel->arguments.clear();
    run();
  }

  // operator() with n arguments: set them, then run() through the PLT.
#define OCCA_STANDIN_LAUNCH(...)                                         \
  {                                                                       \
    assertInitialized();                                                  \
    const kernelArg args[] = {__VA_ARGS__};                               \
    modeKernel->setArguments(args, (int) (sizeof(args) / sizeof(args[0]))); \
    run();                                                                \
  }

  void kernel::operator () (const kernelArg &arg1) const
  OCCA_STANDIN_LAUNCH(arg1)

  void kernel::operator () (const kernelArg &arg1, const kernelArg &arg2) const
  OCCA_STANDIN_LAUNCH(arg1, arg2)

  void kernel::operator () (const kernelArg &arg1, const kernelArg &arg2,
                            const kernelArg &arg3) const
  OCCA_STANDIN_LAUNCH(arg1, arg2, arg3)

  void kernel::operator () (const kernelArg &arg1, const kernelArg &arg2,
                            const kernelArg &arg3, const kernelArg &arg4) const
  OCCA_STANDIN_LAUNCH(arg1, arg2, arg3, arg4)

  void kernel::operator () (const kernelArg &arg1, const kernelArg &arg2,
                            const kernelArg &arg3, const kernelArg &arg4,
                            const kernelArg &arg5) const
  OCCA_STANDIN_LAUNCH(arg1, arg2, arg3, arg4, arg5)

  void kernel::operator () (const kernelArg &arg1, const kernelArg &arg2,
                            const kernelArg &arg3, const kernelArg &arg4,
                            const kernelArg &arg5, const kernelArg &arg6) const
  OCCA_STANDIN_LAUNCH(arg1, arg2, arg3, arg4, arg5, arg6)

  void kernel::operator () (const kernelArg &arg1, const kernelArg &arg2,
                            const kernelArg &arg3, const kernelArg &arg4,
                            const kernelArg &arg5, const kernelArg &arg6,
                            const kernelArg &arg7) const
  OCCA_STANDIN_LAUNCH(arg1, arg2, arg3, arg4, arg5, arg6, arg7)

  void kernel::operator () (const kernelArg &arg1, const kernelArg &arg2,
                            const kernelArg &arg3, const kernelArg &arg4,
                            const kernelArg &arg5, const kernelArg &arg6,
                            const kernelArg &arg7, const kernelArg &arg8) const
  OCCA_STANDIN_LAUNCH(arg1, arg2, arg3, arg4, arg5, arg6, arg7, arg8)

  void kernel::operator () (const kernelArg &arg1, const kernelArg &arg2,
                            const kernelArg &arg3, const kernelArg &arg4,
                            const kernelArg &arg5, const kernelArg &arg6,
                            const kernelArg &arg7, const kernelArg &arg8,
                            const kernelArg &arg9) const
  OCCA_STANDIN_LAUNCH(arg1, arg2, arg3, arg4, arg5, arg6, arg7, arg8, arg9)

  void kernel::operator () (const kernelArg &arg1, const kernelArg &arg2,
                            const kernelArg &arg3, const kernelArg &arg4,
                            const kernelArg &arg5, const kernelArg &arg6,
                            const kernelArg &arg7, const kernelArg &arg8,
                            const kernelArg &arg9, const kernelArg &arg10) const
  OCCA_STANDIN_LAUNCH(arg1, arg2, arg3, arg4, arg5, arg6, arg7, arg8, arg9, arg10)

  void kernel::operator () (const kernelArg &arg1, const kernelArg &arg2,
                            const kernelArg &arg3, const kernelArg &arg4,
                            const kernelArg &arg5, const kernelArg &arg6,
                            const kernelArg &arg7, const kernelArg &arg8,
                            const kernelArg &arg9, const kernelArg &arg10,
                            const kernelArg &arg11) const
  OCCA_STANDIN_LAUNCH(arg1, arg2, arg3, arg4, arg5, arg6, arg7, arg8, arg9, arg10,
                      arg11)

  void kernel::operator () (const kernelArg &arg1, const kernelArg &arg2,
                            const kernelArg &arg3, const kernelArg &arg4,
                            const kernelArg &arg5, const kernelArg &arg6,
                            const kernelArg &arg7, const kernelArg &arg8,
                            const kernelArg &arg9, const kernelArg &arg10,
                            const kernelArg &arg11, const kernelArg &arg12) const
  OCCA_STANDIN_LAUNCH(arg1, arg2, arg3, arg4, arg5, arg6, arg7, arg8, arg9, arg10,
                      arg11, arg12)

  void kernel::operator () (const kernelArg &arg1, const kernelArg &arg2,
                            const kernelArg &arg3, const kernelArg &arg4,
                            const kernelArg &arg5, const kernelArg &arg6,
                            const kernelArg &arg7, const kernelArg &arg8,
                            const kernelArg &arg9, const kernelArg &arg10,
                            const kernelArg &arg11, const kernelArg &arg12,
                            const kernelArg &arg13) const
  OCCA_STANDIN_LAUNCH(arg1, arg2, arg3, arg4, arg5, arg6, arg7, arg8, arg9, arg10,
                      arg11, arg12, arg13)

  void kernel::operator () (const kernelArg &arg1, const kernelArg &arg2,
                            const kernelArg &arg3, const kernelArg &arg4,
                            const kernelArg &arg5, const kernelArg &arg6,
                            const kernelArg &arg7, const kernelArg &arg8,
                            const kernelArg &arg9, const kernelArg &arg10,
                            const kernelArg &arg11, const kernelArg &arg12,
                            const kernelArg &arg13, const kernelArg &arg14) const
  OCCA_STANDIN_LAUNCH(arg1, arg2, arg3, arg4, arg5, arg6, arg7, arg8, arg9, arg10,
                      arg11, arg12, arg13, arg14)

  void kernel::operator () (const kernelArg &arg1, const kernelArg &arg2,
                            const kernelArg &arg3, const kernelArg &arg4,
                            const kernelArg &arg5, const kernelArg &arg6,
                            const kernelArg &arg7, const kernelArg &arg8,
                            const kernelArg &arg9, const kernelArg &arg10,
                            const kernelArg &arg11, const kernelArg &arg12,
                            const kernelArg &arg13, const kernelArg &arg14,
                            const kernelArg &arg15) const
  OCCA_STANDIN_LAUNCH(arg1, arg2, arg3, arg4, arg5, arg6, arg7, arg8, arg9, arg10,
                      arg11, arg12, arg13, arg14, arg15)

  void kernel::operator () (const kernelArg &arg1, const kernelArg &arg2,
                            const kernelArg &arg3, const kernelArg &arg4,
                            const kernelArg &arg5, const kernelArg &arg6,
                            const kernelArg &arg7, const kernelArg &arg8,
                            const kernelArg &arg9, const kernelArg &arg10,
                            const kernelArg &arg11, const kernelArg &arg12,
                            const kernelArg &arg13, const kernelArg &arg14,
                            const kernelArg &arg15, const kernelArg &arg16) const
  OCCA_STANDIN_LAUNCH(arg1, arg2, arg3, arg4, arg5, arg6, arg7, arg8, arg9, arg10,
                      arg11, arg12, arg13, arg14, arg15, arg16)

#undef OCCA_STANDIN_LAUNCH

  void kernel::free() {
    if (!modeKernel) {
      return;
    }
    modeKernel_t *k = modeKernel;
    delete k;
    modeKernel = NULL;
  }

  // ---[ memory ]--------------------------------------------------------------
  memory::memory() :
    modeMemory(NULL) {}

  memory::memory(modeMemory_t *modeMemory_) :
    modeMemory(NULL) {
    setModeMemory(modeMemory_);
  }

  memory::memory(const memory &m) :
    gc::ringEntry_t(),
    modeMemory(NULL) {
    setModeMemory(m.modeMemory);
  }

  memory& memory::operator = (const memory &m) {
    setModeMemory(m.modeMemory);
    return *this;
  }

  memory::~memory() {
    removeMemoryRef();
  }

  void memory::assertInitialized() const {
    if (!modeMemory) {
      fail("memory is not initialized or has been freed");
    }
  }

  void memory::setModeMemory(modeMemory_t *modeMemory_) {
    if (modeMemory == modeMemory_) {
      return;
    }
    removeMemoryRef();
    modeMemory = modeMemory_;
    if (modeMemory) {
      modeMemory->handles.add(this);
    }
  }

  void memory::removeMemoryRef() {
    if (!modeMemory) {
      return;
    }
    modeMemory_t *m = modeMemory;
    modeMemory = NULL;
    if (m->handles.remove(this)) {
      delete m;
    }
  }

  void memory::dontUseRefs() {
    if (modeMemory) {
      modeMemory->handles.stopCounting();
    }
  }

  bool memory::isInitialized() const {
    return modeMemory != NULL;
  }

  template <>
  void* memory::ptr<void>() {
    return modeMemory ? (void*) modeMemory->ptr : NULL;
  }

  template <>
  const void* memory::ptr<void>() const {
    return modeMemory ? (const void*) modeMemory->ptr : NULL;
  }

  modeMemory_t* memory::getModeMemory() const {
    return modeMemory;
  }

  modeDevice_t* memory::getModeDevice() const {
    return modeMemory ? modeMemory->getModeDevice() : NULL;
  }

  occa::device memory::getDevice() const {
    return occa::device(modeMemory ? modeMemory->getModeDevice() : NULL);
  }

  const std::string& memory::mode() const {
    static const std::string noMode = "No Mode";
    modeDevice_t *d = modeMemory ? modeMemory->getModeDevice() : NULL;
    return d ? d->mode : noMode;
  }

  const occa::json& memory::properties() const {
    return (modeMemory && modeMemory->buffer) ? modeMemory->buffer->properties : noneJson();
  }

  void memory::setDtype(const dtype_t &dtype__) {
    assertInitialized();
    if (dtype__.bytes() <= 0) {
      fail("memory::setDtype: " + dtype__.name() + " has no size");
    }
    if (modeMemory->size % (udim_t) dtype__.bytes()) {
      fail("memory::setDtype: " + std::to_string(modeMemory->size)
           + " bytes is not a whole number of " + dtype__.name());
    }
    modeMemory->dtype_ = dtype__;
  }

  const dtype_t& memory::dtype() const {
    return modeMemory ? modeMemory->dtype_ : dtype::none;
  }

  udim_t memory::size() const {
#if OCCA_STANDIN_VERSION >= 20000
    return length();
#else
    return modeMemory ? modeMemory->size : 0;
#endif
  }

  udim_t memory::length() const {
    if (!modeMemory || modeMemory->dtype_.bytes() <= 0) {
      return 0;
    }
    return modeMemory->size / (udim_t) modeMemory->dtype_.bytes();
  }

#if OCCA_STANDIN_VERSION >= 20000
  udim_t memory::byte_size() const {
    return modeMemory ? modeMemory->size : 0;
  }
#endif

  bool memory::operator == (const occa::memory &other) const {
    return modeMemory == other.modeMemory;
  }

  bool memory::operator != (const occa::memory &other) const {
    return modeMemory != other.modeMemory;
  }

  occa::memory memory::operator + (const dim_t offset) const {
    return slice(offset);
  }

  occa::memory memory::slice(const dim_t offset, const dim_t count) const {
    if (!isInitialized()) {
      return memory();
    }
    const dim_t elementBytes = modeMemory->dtype_.bytes();
    const dim_t elements = (count == -1) ? ((dim_t) length() - offset) : count;
    if (offset < 0 || elements < 0 || offset + elements > (dim_t) length()) {
      fail("memory::slice: [" + std::to_string(offset) + ", "
           + std::to_string(offset + elements) + ") is outside [0, "
           + std::to_string(length()) + ")");
    }
    memory m(new hostMemory(modeMemory->buffer,
                            modeMemory->offset + (udim_t) (offset * elementBytes),
                            (udim_t) (elements * elementBytes)));
    m.setDtype(dtype());
    return m;
  }

  namespace {
    // Bytes per unit of a copy's count and offsets: the element size from
    // OCCA 2.0, 1 before (counts were bytes).
    dim_t unitBytes(const dtype_t &dtype) {
#if OCCA_STANDIN_VERSION >= 20000
      return dtype.bytes();
#else
      (void) dtype;
      return 1;
#endif
    }

    // Bytes a copy of count units moves from memory m (count -1: all of it).
    dim_t copyBytes(const modeMemory_t *m, const dim_t count) {
      return (count == -1) ? (dim_t) m->size : unitBytes(m->dtype_) * count;
    }

    void checkRange(const char *what, const dim_t bytes, const dim_t offset, const udim_t size) {
      if (bytes < 0 || offset < 0 || (udim_t) (bytes + offset) > size) {
        fail(std::string(what) + ": bytes [" + std::to_string(offset) + ", "
             + std::to_string(offset + bytes) + ") are outside the memory's "
             + std::to_string(size) + " bytes");
      }
    }
  }

  // Host -> device: count and offset in elements of this memory's dtype.
  void memory::copyFrom(const void *src,
                        const dim_t count,
                        const dim_t offset,
                        const occa::OCCA_STANDIN_PROPS &props) {
    (void) props;
    if (!isInitialized()) {
      return;
    }
    const dim_t elementBytes = unitBytes(modeMemory->dtype_);
    const dim_t bytes = copyBytes(modeMemory, count);
    const dim_t offsetBytes = elementBytes * offset;
    checkRange("memory::copyFrom", bytes, offsetBytes, modeMemory->size);
    modeMemory->write(src, (udim_t) bytes, (udim_t) offsetBytes);
  }

  // Device -> device: count and destOffset in elements of this (the
  // destination's) dtype, srcOffset in elements of src's dtype.
  void memory::copyFrom(const memory src,
                        const dim_t count,
                        const dim_t destOffset,
                        const dim_t srcOffset,
                        const occa::OCCA_STANDIN_PROPS &props) {
    (void) props;
    if (!isInitialized() && !src.isInitialized()) {
      return;
    }
    assertInitialized();
    src.assertInitialized();
    const dim_t elementBytes = unitBytes(modeMemory->dtype_);
    const dim_t bytes = copyBytes(modeMemory, count);
    const dim_t destBytes = elementBytes * destOffset;
    const dim_t srcBytes = unitBytes(src.modeMemory->dtype_) * srcOffset;
    checkRange("memory::copyFrom (source)", bytes, srcBytes, src.modeMemory->size);
    checkRange("memory::copyFrom", bytes, destBytes, modeMemory->size);
    modeMemory->writeFrom(src.modeMemory, (udim_t) bytes, (udim_t) destBytes, (udim_t) srcBytes);
  }

  // Device -> host: count and offset in elements of this memory's dtype.
  void memory::copyTo(void *dest,
                      const dim_t count,
                      const dim_t offset,
                      const occa::OCCA_STANDIN_PROPS &props) const {
    (void) props;
    if (!isInitialized()) {
      return;
    }
    const dim_t elementBytes = unitBytes(modeMemory->dtype_);
    const dim_t bytes = copyBytes(modeMemory, count);
    const dim_t offsetBytes = elementBytes * offset;
    checkRange("memory::copyTo", bytes, offsetBytes, modeMemory->size);
    modeMemory->read(dest, (udim_t) bytes, (udim_t) offsetBytes);
  }

  // Device -> device: count and srcOffset in elements of this (the source's)
  // dtype, destOffset in elements of dest's dtype.
  void memory::copyTo(const memory dest,
                      const dim_t count,
                      const dim_t destOffset,
                      const dim_t srcOffset,
                      const occa::OCCA_STANDIN_PROPS &props) const {
    (void) props;
    if (!isInitialized() && !dest.isInitialized()) {
      return;
    }
    assertInitialized();
    dest.assertInitialized();
    const dim_t elementBytes = unitBytes(modeMemory->dtype_);
    const dim_t bytes = copyBytes(modeMemory, count);
    const dim_t destBytes = unitBytes(dest.modeMemory->dtype_) * destOffset;
    const dim_t srcBytes = elementBytes * srcOffset;
    checkRange("memory::copyTo", bytes, srcBytes, modeMemory->size);
    checkRange("memory::copyTo (destination)", bytes, destBytes, dest.modeMemory->size);
    dest.modeMemory->writeFrom(modeMemory, (udim_t) bytes, (udim_t) destBytes, (udim_t) srcBytes);
  }

  void memory::copyFrom(const void *src, const occa::OCCA_STANDIN_PROPS &props) {
    copyFrom(src, -1, 0, props);
  }

  void memory::copyFrom(const memory src, const occa::OCCA_STANDIN_PROPS &props) {
    copyFrom(src, -1, 0, 0, props);
  }

  void memory::copyTo(void *dest, const occa::OCCA_STANDIN_PROPS &props) const {
    copyTo(dest, -1, 0, props);
  }

  void memory::copyTo(const memory dest, const occa::OCCA_STANDIN_PROPS &props) const {
    copyTo(dest, -1, 0, 0, props);
  }

  occa::memory memory::clone() const {
    if (!modeMemory) {
      return memory();
    }
    memory m = occa::device(modeMemory->getModeDevice())
      .malloc((dim_t) modeMemory->size, *this, properties());
    m.setDtype(dtype());
    return m;
  }

  void memory::free() {
    if (!modeMemory) {
      return;
    }
    modeMemory_t *m = modeMemory;
    delete m;
    modeMemory = NULL;
  }

  // ---[ memoryPool ]----------------------------------------------------------
  OCCA_STANDIN_POOL_BEGIN
  memoryPool::memoryPool() :
    modeMemoryPool(NULL) {}

  memoryPool::memoryPool(modeMemoryPool_t *modeMemoryPool_) :
    modeMemoryPool(NULL) {
    setModeMemoryPool(modeMemoryPool_);
  }

  memoryPool::memoryPool(const memoryPool &m) :
    gc::ringEntry_t(),
    modeMemoryPool(NULL) {
    setModeMemoryPool(m.modeMemoryPool);
  }

  memoryPool& memoryPool::operator = (const memoryPool &m) {
    setModeMemoryPool(m.modeMemoryPool);
    return *this;
  }

  memoryPool::~memoryPool() {
    removeMemoryPoolRef();
  }

  void memoryPool::assertInitialized() const {
    if (!modeMemoryPool) {
      fail("memoryPool is not initialized or has been freed");
    }
  }

  void memoryPool::setModeMemoryPool(modeMemoryPool_t *modeMemoryPool_) {
    if (modeMemoryPool == modeMemoryPool_) {
      return;
    }
    removeMemoryPoolRef();
    modeMemoryPool = modeMemoryPool_;
    if (modeMemoryPool) {
      modeMemoryPool->handles.add(this);
    }
  }

  void memoryPool::removeMemoryPoolRef() {
    if (!modeMemoryPool) {
      return;
    }
    modeMemoryPool_t *p = modeMemoryPool;
    modeMemoryPool = NULL;
    if (p->handles.remove(this)) {
      delete p;
    }
  }

  void memoryPool::dontUseRefs() {
    if (modeMemoryPool) {
      modeMemoryPool->handles.stopCounting();
    }
  }

  bool memoryPool::isInitialized() const {
    return modeMemoryPool != NULL;
  }

  modeMemoryPool_t* memoryPool::getModeMemoryPool() const {
    return modeMemoryPool;
  }

  modeDevice_t* memoryPool::getModeDevice() const {
    return modeMemoryPool ? modeMemoryPool->modeDevice : NULL;
  }

  occa::device memoryPool::getDevice() const {
    return occa::device(modeMemoryPool ? modeMemoryPool->modeDevice : NULL);
  }

  udim_t memoryPool::size() const {
    return modeMemoryPool ? modeMemoryPool->storage->bytes : 0;
  }

  udim_t memoryPool::reserved() const {
    return modeMemoryPool ? modeMemoryPool->reservedBytes() : 0;
  }

  udim_t memoryPool::numReservations() const {
    return modeMemoryPool ? (udim_t) modeMemoryPool->storage->views.size() : 0;
  }

  void memoryPool::resize(const udim_t bytes) {
    assertInitialized();
    modeMemoryPool->resize(bytes);
  }

  void memoryPool::free() {
    if (!modeMemoryPool) {
      return;
    }
    modeMemoryPool_t *p = modeMemoryPool;
    delete p;
    modeMemoryPool = NULL;
  }

  occa::memory memoryPool::reserve(const dim_t entries, const dtype_t &dtype) {
    assertInitialized();
    if (entries == 0) {
      return memory();
    }
    const dim_t bytes = entries * dtype.bytes();
    if (bytes < 0) {
      fail("memoryPool::reserve: negative size (" + std::to_string(bytes) + " bytes)");
    }
    memory mem(modeMemoryPool->reserve((udim_t) bytes));
    mem.setDtype(dtype);
    return mem;
  }

  template <>
  occa::memory memoryPool::reserve<void>(const dim_t entries) {
    return reserve(entries, dtype::byte);
  }
  OCCA_STANDIN_POOL_END

  // ---[ stream ]--------------------------------------------------------------
  stream::stream() :
    modeStream(NULL) {}

  stream::stream(modeStream_t *modeStream_) :
    modeStream(NULL) {
    setModeStream(modeStream_);
  }

  stream::stream(const stream &s) :
    gc::ringEntry_t(),
    modeStream(NULL) {
    setModeStream(s.modeStream);
  }

  stream& stream::operator = (const stream &m) {
    setModeStream(m.modeStream);
    return *this;
  }

  stream::~stream() {
    removeStreamRef();
  }

  void stream::setModeStream(modeStream_t *modeStream_) {
    if (modeStream == modeStream_) {
      return;
    }
    removeStreamRef();
    modeStream = modeStream_;
    if (modeStream) {
      modeStream->handles.add(this);
    }
  }

  void stream::removeStreamRef() {
    if (!modeStream) {
      return;
    }
    modeStream_t *s = modeStream;
    modeStream = NULL;
    if (s->handles.remove(this)) {
      delete s;
    }
  }

  void stream::dontUseRefs() {
    if (modeStream) {
      modeStream->handles.stopCounting();
    }
  }

  bool stream::isInitialized() const {
    return modeStream != NULL;
  }

  modeStream_t* stream::getModeStream() const {
    return modeStream;
  }

  modeDevice_t* stream::getModeDevice() const {
    return modeStream ? modeStream->modeDevice : NULL;
  }

  occa::device stream::getDevice() const {
    return occa::device(modeStream ? modeStream->modeDevice : NULL);
  }

  const std::string& stream::mode() const {
    static const std::string noMode = "No Mode";
    return (modeStream && modeStream->modeDevice) ? modeStream->modeDevice->mode : noMode;
  }

  const occa::json& stream::properties() const {
    return modeStream ? modeStream->properties : noneJson();
  }

  bool stream::operator == (const occa::stream &other) const {
    return modeStream == other.modeStream;
  }

  bool stream::operator != (const occa::stream &other) const {
    return modeStream != other.modeStream;
  }

  void stream::free() {
    if (!modeStream) {
      return;
    }
    modeStream_t *s = modeStream;
    delete s;
    modeStream = NULL;
  }

#if OCCA_STANDIN_VERSION >= 10400
  void stream::finish() {
    // Host execution is synchronous: nothing to wait for.
  }
#endif

  // ---[ streamTag ]-----------------------------------------------------------
  streamTag::streamTag() :
    modeStreamTag(NULL) {}

  streamTag::streamTag(modeStreamTag_t *modeStreamTag_) :
    modeStreamTag(NULL) {
    setModeStreamTag(modeStreamTag_);
  }

  streamTag::streamTag(const streamTag &s) :
    gc::ringEntry_t(),
    modeStreamTag(NULL) {
    setModeStreamTag(s.modeStreamTag);
  }

  streamTag& streamTag::operator = (const streamTag &m) {
    setModeStreamTag(m.modeStreamTag);
    return *this;
  }

  streamTag::~streamTag() {
    removeStreamTagRef();
  }

  void streamTag::setModeStreamTag(modeStreamTag_t *modeStreamTag_) {
    if (modeStreamTag == modeStreamTag_) {
      return;
    }
    removeStreamTagRef();
    modeStreamTag = modeStreamTag_;
    if (modeStreamTag) {
      modeStreamTag->handles.add(this);
    }
  }

  void streamTag::removeStreamTagRef() {
    if (!modeStreamTag) {
      return;
    }
    modeStreamTag_t *t = modeStreamTag;
    modeStreamTag = NULL;
    if (t->handles.remove(this)) {
      delete t;
    }
  }

  void streamTag::dontUseRefs() {
    if (modeStreamTag) {
      modeStreamTag->handles.stopCounting();
    }
  }

  bool streamTag::isInitialized() const {
    return modeStreamTag != NULL;
  }

  modeStreamTag_t* streamTag::getModeStreamTag() const {
    return modeStreamTag;
  }

  modeDevice_t* streamTag::getModeDevice() const {
    return modeStreamTag ? modeStreamTag->modeDevice : NULL;
  }

  occa::device streamTag::getDevice() const {
    return occa::device(modeStreamTag ? modeStreamTag->modeDevice : NULL);
  }

  void streamTag::wait() const {}

  bool streamTag::operator == (const occa::streamTag &other) const {
    return modeStreamTag == other.modeStreamTag;
  }

  bool streamTag::operator != (const occa::streamTag &other) const {
    return modeStreamTag != other.modeStreamTag;
  }

  void streamTag::free() {
    if (!modeStreamTag) {
      return;
    }
    modeStreamTag_t *t = modeStreamTag;
    delete t;
    modeStreamTag = NULL;
  }

  // ---[ Free functions ]------------------------------------------------------
  device host() {
    thread_local device dev;
    if (!dev.isInitialized()) {
      dev = occa::device({{"mode", "Serial"}});
      // Never freed, as in OCCA. (Kept in a list that is never freed either,
      // so that leak checkers report it as still reachable, not lost.)
      dev.dontUseRefs();
      static std::mutex lock;
      static std::vector<modeDevice_t*> *kept = new std::vector<modeDevice_t*>();
      std::lock_guard<std::mutex> guard(lock);
      kept->push_back(dev.getModeDevice());
    }
    return dev;
  }

  device& getDevice() {
    thread_local device dev;
    if (!dev.isInitialized()) {
      dev = host();
    }
    return dev;
  }

  void setDevice(device d) {
    getDevice() = d;
  }

  void setDevice(const std::string &props) {
    getDevice() = device(props);
  }

  void setDevice(const occa::OCCA_STANDIN_PROPS &props) {
    getDevice() = device(props);
  }

  void finish() {
    getDevice().finish();
  }

  stream createStream(const occa::OCCA_STANDIN_PROPS &props) {
    return getDevice().createStream(props);
  }

  stream getStream() {
    return getDevice().getStream();
  }

  void setStream(stream s) {
    getDevice().setStream(s);
  }

  streamTag tagStream() {
    return getDevice().tagStream();
  }

  kernel buildKernel(const std::string &filename,
                     const std::string &kernelName,
                     const occa::OCCA_STANDIN_PROPS &props) {
    return getDevice().buildKernel(filename, kernelName, props);
  }

  kernel buildKernelFromString(const std::string &content,
                               const std::string &kernelName,
                               const occa::OCCA_STANDIN_PROPS &props) {
    return getDevice().buildKernelFromString(content, kernelName, props);
  }

  occa::memory malloc(const dim_t entries,
                      const dtype_t &dtype,
                      const void *src,
                      const occa::OCCA_STANDIN_PROPS &props) {
    return getDevice().malloc(entries, dtype, src, props);
  }

  template <>
  occa::memory malloc<void>(const dim_t entries,
                            const void *src,
                            const occa::OCCA_STANDIN_PROPS &props) {
    return malloc(entries, dtype::byte, src, props);
  }

  void memcpy(memory dest, const void *src,
              const dim_t count, const dim_t offset,
              const occa::OCCA_STANDIN_PROPS &props) {
    dest.copyFrom(src, count, offset, props);
  }

  void memcpy(void *dest, memory src,
              const dim_t count, const dim_t offset,
              const occa::OCCA_STANDIN_PROPS &props) {
    src.copyTo(dest, count, offset, props);
  }

  void memcpy(memory dest, memory src,
              const dim_t count, const dim_t destOffset, const dim_t srcOffset,
              const occa::OCCA_STANDIN_PROPS &props) {
    dest.copyFrom(src, count, destOffset, srcOffset, props);
  }

  void memcpy(memory dest, const void *src, const occa::OCCA_STANDIN_PROPS &props) {
    memcpy(dest, src, -1, 0, props);
  }

  void memcpy(void *dest, memory src, const occa::OCCA_STANDIN_PROPS &props) {
    memcpy(dest, src, -1, 0, props);
  }

  void memcpy(memory dest, memory src, const occa::OCCA_STANDIN_PROPS &props) {
    memcpy(dest, src, -1, 0, 0, props);
  }

  void free(device d) {
    d.free();
  }

  void free(stream s) {
    s.free();
  }

  void free(kernel k) {
    k.free();
  }

  void free(memory m) {
    m.free();
  }
}

// ---[ C API ]-----------------------------------------------------------------
// Type codes and the magic header: the values of OCCA's C ABI.
enum {
  typeUndefined = 0,
  typeDefault = 1,
  typeNull = 2,
  typePtr = 3,
  typeBool = 4,
  typeInt8 = 5,
  typeUInt8 = 6,
  typeInt16 = 7,
  typeUInt16 = 8,
  typeInt32 = 9,
  typeUInt32 = 10,
  typeInt64 = 11,
  typeUInt64 = 12,
  typeFloat = 13,
  typeDouble = 14,
  typeStruct = 15,
  typeString = 16,
  typeDevice = 17,
  typeKernel = 18,
  typeKernelBuilder = 19,
  typeMemory = 20,
  typeMemoryPool = 21,
  typeStream = 22,
  typeStreamTag = 23,
  typeDtype = 24,
  typeScope = 25,
  typeJson = 26
};

static const int undefinedMagicHeader = 0x770C2D18;

namespace {
  occaType makeValue(const int type, const occa::udim_t bytes) {
    occaType t;
    std::memset(&t, 0, sizeof(t));
    t.magicHeader = OCCA_C_TYPE_MAGIC_HEADER;
    t.type = type;
    t.bytes = bytes;
    t.needsFree = false;
    return t;
  }

  occaType makeObject(const int type, const void *ptr) {
    if (!ptr) {
      occaType t = makeValue(typeUndefined, 0);
      t.magicHeader = undefinedMagicHeader;
      return t;
    }
    occaType t = makeValue(type, sizeof(void*));
    t.value.ptr = (char*) const_cast<void*>(ptr);
    return t;
  }

  bool isDefaultValue(const occaType &t) {
    return t.magicHeader == OCCA_C_TYPE_MAGIC_HEADER && t.type == typeDefault;
  }

  bool isUndefinedValue(const occaType &t) {
    return t.magicHeader != OCCA_C_TYPE_MAGIC_HEADER || t.type == typeUndefined;
  }

  void expectType(const occaType &t, const int type, const char *what) {
    if (isUndefinedValue(t) || t.type != type) {
      fail(std::string("occa C API: expected ") + what);
    }
  }

  occa::device cDevice(const occaType &t) {
    if (isUndefinedValue(t)) {
      return occa::device();
    }
    expectType(t, typeDevice, "an occaDevice");
    return occa::device((occa::modeDevice_t*) t.value.ptr);
  }

  occa::kernel cKernel(const occaType &t) {
    if (isUndefinedValue(t)) {
      return occa::kernel();
    }
    expectType(t, typeKernel, "an occaKernel");
    return occa::kernel((occa::modeKernel_t*) t.value.ptr);
  }

  occa::memory cMemory(const occaType &t) {
    if (isUndefinedValue(t)) {
      return occa::memory();
    }
    expectType(t, typeMemory, "an occaMemory");
    return occa::memory((occa::modeMemory_t*) t.value.ptr);
  }

  occa::stream cStream(const occaType &t) {
    if (isUndefinedValue(t)) {
      return occa::stream();
    }
    expectType(t, typeStream, "an occaStream");
    return occa::stream((occa::modeStream_t*) t.value.ptr);
  }

  occa::streamTag cStreamTag(const occaType &t) {
    if (isUndefinedValue(t)) {
      return occa::streamTag();
    }
    expectType(t, typeStreamTag, "an occaStreamTag");
    return occa::streamTag((occa::modeStreamTag_t*) t.value.ptr);
  }

  const occa::dtype_t& cDtype(const occaType &t) {
    expectType(t, typeDtype, "an occaDtype");
    return *(const occa::dtype_t*) t.value.ptr;
  }

  const occa::json& cJson(const occaType &t) {
    if (isDefaultValue(t) || isUndefinedValue(t)) {
      return noneJson();
    }
    expectType(t, typeJson, "an occaJson");
    return *(const occa::json*) t.value.ptr;
  }

  occa::kernelArg cKernelArg(const occaType &t) {
    switch (t.type) {
      case typePtr: return occa::kernelArg((void*) t.value.ptr);
      case typeBool: return occa::kernelArg(t.value.uint8_ != 0);
      case typeInt8: return occa::kernelArg((signed char) t.value.int8_);
      case typeUInt8: return occa::kernelArg((unsigned char) t.value.uint8_);
      case typeInt16: return occa::kernelArg((short) t.value.int16_);
      case typeUInt16: return occa::kernelArg((unsigned short) t.value.uint16_);
      case typeInt32: return occa::kernelArg((int) t.value.int32_);
      case typeUInt32: return occa::kernelArg((unsigned int) t.value.uint32_);
      case typeInt64: return occa::kernelArg((long) t.value.int64_);
      case typeUInt64: return occa::kernelArg((unsigned long) t.value.uint64_);
      case typeFloat: return occa::kernelArg(t.value.float_);
      case typeDouble: return occa::kernelArg(t.value.double_);
      case typeMemory: return occa::kernelArg(cMemory(t));
      case typeNull: return occa::kernelArg((void*) NULL);
      default:
        fail("occa C API: this value cannot be a kernel argument (type "
             + std::to_string(t.type) + ")");
    }
  }

  occaType dtypeValue(const occa::dtype_t &d) {
    return makeObject(typeDtype, &d);
  }

  occaType boolValue(const bool b) {
    occaType t = makeValue(typeBool, sizeof(bool));
    t.value.uint8_ = b ? 1 : 0;
    return t;
  }

  occaType undefinedValue() {
    occaType t = makeValue(typeUndefined, 0);
    t.magicHeader = undefinedMagicHeader;
    return t;
  }
}

extern "C" {
  const int OCCA_UNDEFINED = typeUndefined;
  const int OCCA_DEFAULT = typeDefault;
  const int OCCA_NULL = typeNull;
  const int OCCA_PTR = typePtr;
  const int OCCA_BOOL = typeBool;
  const int OCCA_INT8 = typeInt8;
  const int OCCA_UINT8 = typeUInt8;
  const int OCCA_INT16 = typeInt16;
  const int OCCA_UINT16 = typeUInt16;
  const int OCCA_INT32 = typeInt32;
  const int OCCA_UINT32 = typeUInt32;
  const int OCCA_INT64 = typeInt64;
  const int OCCA_UINT64 = typeUInt64;
  const int OCCA_FLOAT = typeFloat;
  const int OCCA_DOUBLE = typeDouble;
  const int OCCA_STRUCT = typeStruct;
  const int OCCA_STRING = typeString;
  const int OCCA_DEVICE = typeDevice;
  const int OCCA_KERNEL = typeKernel;
  const int OCCA_KERNELBUILDER = typeKernelBuilder;
  const int OCCA_MEMORY = typeMemory;
  const int OCCA_MEMORYPOOL = typeMemoryPool;
  const int OCCA_STREAM = typeStream;
  const int OCCA_STREAMTAG = typeStreamTag;
  const int OCCA_DTYPE = typeDtype;
  const int OCCA_SCOPE = typeScope;
  const int OCCA_JSON = typeJson;

  const occaType occaUndefined = undefinedValue();
  const occaType occaDefault = makeValue(typeDefault, 0);
  const occaType occaNull = makeValue(typeNull, sizeof(void*));
  const occaType occaTrue = boolValue(true);
  const occaType occaFalse = boolValue(false);
  const occaUDim_t occaAllBytes = (occaUDim_t) -1;

  const occaDtype occaDtypeNone = dtypeValue(occa::dtype::none);
  const occaDtype occaDtypeVoid = dtypeValue(occa::dtype::void_);
  const occaDtype occaDtypeByte = dtypeValue(occa::dtype::byte);
  const occaDtype occaDtypeBool = dtypeValue(occa::dtype::bool_);
  const occaDtype occaDtypeChar = dtypeValue(occa::dtype::char_);
  const occaDtype occaDtypeShort = dtypeValue(occa::dtype::short_);
  const occaDtype occaDtypeInt = dtypeValue(occa::dtype::int_);
  const occaDtype occaDtypeLong = dtypeValue(occa::dtype::long_);
  const occaDtype occaDtypeFloat = dtypeValue(occa::dtype::float_);
  const occaDtype occaDtypeDouble = dtypeValue(occa::dtype::double_);

  // ---[ Values ]--------------------------------------------------------------
  bool occaIsUndefined(occaType value) {
    return isUndefinedValue(value);
  }

  bool occaIsDefault(occaType value) {
    return isDefaultValue(value);
  }

  occaType occaPtr(const void *value) {
    occaType t = makeValue(typePtr, sizeof(void*));
    t.value.ptr = (char*) const_cast<void*>(value);
    return t;
  }

  occaType occaBool(bool value) {
    return boolValue(value);
  }

  occaType occaInt32(int32_t value) {
    occaType t = makeValue(typeInt32, sizeof(value));
    t.value.int32_ = value;
    return t;
  }

  occaType occaUInt32(uint32_t value) {
    occaType t = makeValue(typeUInt32, sizeof(value));
    t.value.uint32_ = value;
    return t;
  }

  occaType occaInt64(int64_t value) {
    occaType t = makeValue(typeInt64, sizeof(value));
    t.value.int64_ = value;
    return t;
  }

  occaType occaUInt64(uint64_t value) {
    occaType t = makeValue(typeUInt64, sizeof(value));
    t.value.uint64_ = value;
    return t;
  }

  occaType occaInt(int value) {
    return occaInt32(value);
  }

  occaType occaUInt(unsigned int value) {
    return occaUInt32(value);
  }

  occaType occaLong(long value) {
    return occaInt64(value);
  }

  occaType occaULong(unsigned long value) {
    return occaUInt64(value);
  }

  occaType occaFloat(float value) {
    occaType t = makeValue(typeFloat, sizeof(value));
    t.value.float_ = value;
    return t;
  }

  occaType occaDouble(double value) {
    occaType t = makeValue(typeDouble, sizeof(value));
    t.value.double_ = value;
    return t;
  }

  occaType occaString(const char *str) {
    const size_t n = std::strlen(str);
    occaType t = makeValue(typeString, n);
    t.value.ptr = new char[n + 1];
    std::memcpy(t.value.ptr, str, n + 1);
    t.needsFree = true;
    return t;
  }

  void occaFree(occaType *value) {
    if (!value || isUndefinedValue(*value)) {
      return;
    }
    switch (value->type) {
      case typeDevice: cDevice(*value).free(); break;
      case typeKernel: cKernel(*value).free(); break;
      case typeMemory: cMemory(*value).free(); break;
      case typeStream: cStream(*value).free(); break;
      case typeStreamTag: cStreamTag(*value).free(); break;
      case typeMemoryPool:
        occa::memoryPool((occa::modeMemoryPool_t*) value->value.ptr).free();
        break;
      case typeJson:
        if (value->needsFree) {
          delete (occa::json*) value->value.ptr;
        }
        break;
      case typeString:
        if (value->needsFree) {
          delete[] value->value.ptr;
        }
        break;
      default:
        break;
    }
    *value = undefinedValue();
  }

  // ---[ json ]----------------------------------------------------------------
  occaJson occaCreateJson(void) {
    occaType t = makeObject(typeJson, new occa::json());
    t.needsFree = true;
    return t;
  }

  occaJson occaJsonParse(const char *c) {
    occaType t = makeObject(typeJson, new occa::json(occa::json::parse(std::string(c ? c : ""))));
    t.needsFree = true;
    return t;
  }

  const char* occaJsonDump(occaJson j, const int indent) {
    thread_local std::string out;
    out = cJson(j).dump(indent);
    return out.c_str();
  }

  // ---[ Global device ]-------------------------------------------------------
  occaDevice occaHost(void) {
    return makeObject(typeDevice, occa::host().getModeDevice());
  }

  occaDevice occaGetDevice(void) {
    return makeObject(typeDevice, occa::getDevice().getModeDevice());
  }

  void occaSetDevice(occaDevice device) {
    occa::setDevice(cDevice(device));
  }

  void occaSetDeviceFromString(const char *info) {
    occa::setDevice(occa::OCCA_STANDIN_PROPS(occa::json::parse(std::string(info ? info : ""))));
  }

  void occaFinish(void) {
    occa::finish();
  }

  occaStream occaCreateStream(occaJson props) {
    occa::stream s;
    if (isDefaultValue(props)) {
      s = occa::createStream();
    } else {
      s = occa::createStream(cJson(props));
    }
    s.dontUseRefs();
    return makeObject(typeStream, s.getModeStream());
  }

  occaStream occaGetStream(void) {
    return makeObject(typeStream, occa::getStream().getModeStream());
  }

  void occaSetStream(occaStream stream) {
    occa::setStream(cStream(stream));
  }

  occaStreamTag occaTagStream(void) {
    occa::streamTag tag = occa::tagStream();
    tag.dontUseRefs();
    return makeObject(typeStreamTag, tag.getModeStreamTag());
  }

  double occaTimeBetweenTags(occaStreamTag startTag, occaStreamTag endTag) {
    return occa::getDevice().timeBetween(cStreamTag(startTag), cStreamTag(endTag));
  }

  // ---[ Device ]--------------------------------------------------------------
  occaDevice occaCreateDevice(occaType info) {
    occa::device d;
    if (info.type == typeString) {
      d = occa::device(occa::OCCA_STANDIN_PROPS(occa::json::parse(std::string(info.value.ptr))));
    } else {
      d = occa::device(occa::OCCA_STANDIN_PROPS(cJson(info)));
    }
    d.dontUseRefs();
    return makeObject(typeDevice, d.getModeDevice());
  }

  occaDevice occaCreateDeviceFromString(const char *info) {
    occa::device d(occa::OCCA_STANDIN_PROPS(occa::json::parse(std::string(info ? info : ""))));
    d.dontUseRefs();
    return makeObject(typeDevice, d.getModeDevice());
  }

  bool occaDeviceIsInitialized(occaDevice device) {
    return cDevice(device).isInitialized();
  }

  const char* occaDeviceMode(occaDevice device) {
    return cDevice(device).mode().c_str();
  }

  void occaDeviceFinish(occaDevice device) {
    cDevice(device).finish();
  }

  occaStream occaDeviceCreateStream(occaDevice device, occaJson props) {
    occa::device d = cDevice(device);
    occa::stream s;
    if (isDefaultValue(props)) {
      s = d.createStream();
    } else {
      s = d.createStream(cJson(props));
    }
    s.dontUseRefs();
    return makeObject(typeStream, s.getModeStream());
  }

  occaStream occaDeviceGetStream(occaDevice device) {
    return makeObject(typeStream, cDevice(device).getStream().getModeStream());
  }

  void occaDeviceSetStream(occaDevice device, occaStream stream) {
    occa::device d = cDevice(device);
    d.setStream(cStream(stream));
  }

  occaStreamTag occaDeviceTagStream(occaDevice device) {
    occa::device d = cDevice(device);
    occa::streamTag tag = d.tagStream();
    tag.dontUseRefs();
    return makeObject(typeStreamTag, tag.getModeStreamTag());
  }

  void occaDeviceWaitForTag(occaDevice device, occaStreamTag tag) {
    occa::device d = cDevice(device);
    d.waitFor(cStreamTag(tag));
  }

  double occaDeviceTimeBetweenTags(occaDevice device,
                                   occaStreamTag startTag,
                                   occaStreamTag endTag) {
    occa::device d = cDevice(device);
    return d.timeBetween(cStreamTag(startTag), cStreamTag(endTag));
  }

  occaKernel occaDeviceBuildKernel(occaDevice device,
                                   const char *filename,
                                   const char *kernelName,
                                   const occaJson props) {
    occa::device d = cDevice(device);
    occa::kernel k;
    if (isDefaultValue(props)) {
      k = d.buildKernel(filename, kernelName);
    } else {
      k = d.buildKernel(filename, kernelName, cJson(props));
    }
    k.dontUseRefs();
    return makeObject(typeKernel, k.getModeKernel());
  }

  occaKernel occaDeviceBuildKernelFromString(occaDevice device,
                                             const char *str,
                                             const char *kernelName,
                                             const occaJson props) {
    occa::device d = cDevice(device);
    occa::kernel k;
    if (isDefaultValue(props)) {
      k = d.buildKernelFromString(str, kernelName);
    } else {
      k = d.buildKernelFromString(str, kernelName, cJson(props));
    }
    k.dontUseRefs();
    return makeObject(typeKernel, k.getModeKernel());
  }

  occaMemory occaDeviceMalloc(occaDevice device,
                              const occaUDim_t bytes,
                              const void *src,
                              occaJson props) {
    return occaDeviceTypedMalloc(device, bytes, occaDtypeByte, src, props);
  }

  occaMemory occaDeviceTypedMalloc(occaDevice device,
                                   const occaUDim_t entries,
                                   const occaDtype dtype,
                                   const void *src,
                                   occaJson props) {
    occa::device d = cDevice(device);
    const occa::dtype_t &dt = cDtype(dtype);
    occa::memory m;
    if (isDefaultValue(props)) {
      m = d.malloc((occa::dim_t) entries, dt, src);
    } else {
      m = d.malloc((occa::dim_t) entries, dt, src, cJson(props));
    }
    m.dontUseRefs();
    return makeObject(typeMemory, m.getModeMemory());
  }

  // ---[ Memory ]--------------------------------------------------------------
  bool occaMemoryIsInitialized(occaMemory memory) {
    return cMemory(memory).isInitialized();
  }

  void* occaMemoryPtr(occaMemory memory) {
    occa::memory m = cMemory(memory);
    return m.ptr();
  }

  occaUDim_t occaMemorySize(occaMemory memory) {
    return cMemory(memory).size();
  }

  void occaCopyMemToMem(occaMemory dest, occaMemory src,
                        const occaUDim_t bytes,
                        const occaUDim_t destOffset,
                        const occaUDim_t srcOffset,
                        occaJson props) {
    occa::memory src_ = cMemory(src);
    occa::memory dest_ = cMemory(dest);
    if (isDefaultValue(props)) {
      occa::memcpy(dest_, src_, (occa::dim_t) bytes, (occa::dim_t) destOffset, (occa::dim_t) srcOffset);
    } else {
      occa::memcpy(dest_, src_, (occa::dim_t) bytes, (occa::dim_t) destOffset, (occa::dim_t) srcOffset,
                   cJson(props));
    }
  }

  void occaCopyPtrToMem(occaMemory dest,
                        const void *src,
                        const occaUDim_t bytes,
                        const occaUDim_t offset,
                        occaJson props) {
    occa::memory dest_ = cMemory(dest);
    if (isDefaultValue(props)) {
      occa::memcpy(dest_, src, (occa::dim_t) bytes, (occa::dim_t) offset);
    } else {
      occa::memcpy(dest_, src, (occa::dim_t) bytes, (occa::dim_t) offset, cJson(props));
    }
  }

  void occaCopyMemToPtr(void *dest,
                        occaMemory src,
                        const occaUDim_t bytes,
                        const occaUDim_t offset,
                        occaJson props) {
    occa::memory src_ = cMemory(src);
    if (isDefaultValue(props)) {
      occa::memcpy(dest, src_, (occa::dim_t) bytes, (occa::dim_t) offset);
    } else {
      occa::memcpy(dest, src_, (occa::dim_t) bytes, (occa::dim_t) offset, cJson(props));
    }
  }

  // ---[ Kernel ]--------------------------------------------------------------
  bool occaKernelIsInitialized(occaKernel kernel) {
    return cKernel(kernel).isInitialized();
  }

  const char* occaKernelName(occaKernel kernel) {
    return cKernel(kernel).name().c_str();
  }

  const char* occaKernelBinaryFilename(occaKernel kernel) {
    return cKernel(kernel).binaryFilename().c_str();
  }

  void occaKernelPushArg(occaKernel kernel, occaType arg) {
    cKernel(kernel).pushArg(cKernelArg(arg));
  }

  void occaKernelClearArgs(occaKernel kernel) {
    cKernel(kernel).clearArgs();
  }

  void occaKernelRunFromArgs(occaKernel kernel) {
    cKernel(kernel).run();
  }

  void occaKernelRunN(occaKernel kernel, const int argc, ...) {
    va_list args;
    va_start(args, argc);
    occaKernelVaRun(kernel, argc, args);
    va_end(args);
  }

  // Sets the arguments on the mode kernel directly (no pushArg calls), then
  // calls kernel::run().
  void occaKernelVaRun(occaKernel kernel, const int argc, va_list args) {
    occa::kernel k = cKernel(kernel);
    if (!k.isInitialized()) {
      fail("occaKernelVaRun: uninitialized kernel");
    }
    std::vector<occa::kernelArg> kargs;
    va_list copy;
    va_copy(copy, args);
    for (int i = 0; i < argc; ++i) {
      kargs.push_back(cKernelArg(va_arg(copy, occaType)));
    }
    va_end(copy);
    k.getModeKernel()->setArguments(kargs.data(), (int) kargs.size());
    k.run();
  }

  void occaKernelRunWithArgs(occaKernel kernel, const int argc, occaType *args) {
    occa::kernel k = cKernel(kernel);
    if (!k.isInitialized()) {
      fail("occaKernelRunWithArgs: uninitialized kernel");
    }
    std::vector<occa::kernelArg> kargs;
    for (int i = 0; i < argc; ++i) {
      kargs.push_back(cKernelArg(args[i]));
    }
    k.getModeKernel()->setArguments(kargs.data(), (int) kargs.size());
    k.run();
  }

  // ---[ Stream ]--------------------------------------------------------------
  void occaStreamFinish(occaStream stream) {
#if OCCA_STANDIN_VERSION >= 10400
    cStream(stream).finish();
#else
    (void) stream;
#endif
  }
}
