// occa.hpp: the public C++ API of the OCCA stand-in (tests/occa-standin).
//
// This is NOT OCCA. It is a small library written for occa-tools' tests that
// exports a subset of the functions of OCCA 2.0's libocca.so under the very
// same mangled names, so that the occa-tools preload adapter (runtime/occa/)
// can be built and tested where real OCCA is not installed. Only the class
// names, namespaces and function signatures follow OCCA 2.0 (they decide the
// mangled names); everything else (layout of json, dtype_t and kernelArg,
// the bodies, the internal classes) is our own and much simpler.
//
// Rules that keep the stand-in faithful to real libocca's call structure:
//   - every member function is defined out of line in standin.cpp; the only
//     bodies here are templates that forward to exported functions, so that
//     calls go through the PLT exactly as they do in real OCCA;
//   - the handle classes (device, kernel, memory, stream, streamTag,
//     memoryPool) are three pointers (two ring links, one mode object) with
//     user-defined copy, assignment and destructor, hence passed and
//     returned in memory like real OCCA's handles.
#ifndef OCCA_STANDIN_OCCA_HPP
#define OCCA_STANDIN_OCCA_HPP

// Variants (README.md): the stand-in follows OCCA 2.0 unless built with
//   -DOCCA_STANDIN_VERSION=N   another OCCA's names and conventions, N =
//                              major * 10000 + minor * 100 + patch:
//       < 10200  property parameters are occa::properties (OCCA 1.0-1.1),
//                no device::setup(string), no kernel::run({...})
//       < 10400  no device::finishAll, no stream::finish
//       < 10500  no memory pool (the stand-in's own is renamed out of OCCA's
//                names)
//       < 20000  the pool is occa::experimental::memoryPool; copy counts
//                and offsets are bytes; no memory::byte_size, no wrapMemory
//   -DOCCA_STANDIN_NEKRS       nekRS's bundled OCCA: occa::kernel carries a
//                              hash member (128 bytes in all); builds honour
//                              build/compile_only and build/load_only; and,
//                              as in a clang-built libocca, run({...})
//                              launches without calling run()
//   -DOCCA_STANDIN_KERNEL_PAD=N  N more bytes in occa::kernel, written by
//                              its constructors
#ifndef OCCA_STANDIN_VERSION
#define OCCA_STANDIN_VERSION 20000
#endif
#if OCCA_STANDIN_VERSION < 10200
#define OCCA_STANDIN_PROPS properties
#else
#define OCCA_STANDIN_PROPS json
#endif
#if OCCA_STANDIN_VERSION < 10500
#define OCCA_STANDIN_POOL_NS standin_nopool
#elif OCCA_STANDIN_VERSION < 20000
#define OCCA_STANDIN_POOL_NS experimental
#endif
#ifdef OCCA_STANDIN_POOL_NS
#define OCCA_STANDIN_POOL_BEGIN namespace OCCA_STANDIN_POOL_NS {
#define OCCA_STANDIN_POOL_END }
#else
#define OCCA_STANDIN_POOL_BEGIN
#define OCCA_STANDIN_POOL_END
#endif

#include <cstddef>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

namespace occa {
  // OCCA's index types: int64_t/uint64_t, i.e. `long`/`unsigned long` on
  // x86-64 Linux (mangled `l`/`m`).
  typedef int64_t dim_t;
  typedef uint64_t udim_t;

  class json;
  class jsonKeyValue;
  typedef std::initializer_list<jsonKeyValue> jsonInitializerList;

  class dtype_t;
  class kernelArg;
  class device;
  class kernel;
  class memory;
  OCCA_STANDIN_POOL_BEGIN class memoryPool; OCCA_STANDIN_POOL_END
#ifdef OCCA_STANDIN_POOL_NS
  using OCCA_STANDIN_POOL_NS::memoryPool;
#endif
  class stream;
  class streamTag;

  // Internal ("mode") classes: defined in standin.cpp only.
  class modeDevice_t;
  class modeKernel_t;
  class modeMemory_t;
  class modeMemoryPool_t;
  class modeStream_t;
  class modeStreamTag_t;

  // ---[ Errors ]--------------------------------------------------------------
  // Thrown by the stand-in wherever it refuses a call (a kernel file that
  // cannot be read, an uninitialized handle, an out-of-range copy).
  class exception : public std::exception {
   public:
    std::string message;

    exception(const std::string &message_);
    exception(const exception &other);
    ~exception() throw();

    const char* what() const throw();
  };

  // ---[ Ring links ]----------------------------------------------------------
  // Real OCCA links every handle of one object into a ring; the stand-in keeps
  // the two links (so handles have the same size) but tracks handles itself.
  namespace gc {
    class ringEntry_t {
     public:
      ringEntry_t *leftRingEntry;
      ringEntry_t *rightRingEntry;

      ringEntry_t();
    };
  }

  // ---[ json ]----------------------------------------------------------------
  // A small JSON value: null, boolean, number, string, array or object.
  // The parser also takes OCCA's relaxed form: unquoted keys and 'single
  // quoted' strings ("{mode: 'Serial'}").
  class json {
   public:
    enum type_t {
      none_    = (1 << 0),
      null_    = (1 << 1),
      number_  = (1 << 2),
      string_  = (1 << 3),
      array_   = (1 << 4),
      object_  = (1 << 5),
      boolean_ = (1 << 6)
    };

    type_t type;
    bool boolValue;
    double numberValue;
    std::string stringValue;
    std::vector<json> arrayValue;
    std::map<std::string, json> objectValue;

    json();
    json(const json &other);
    json(const bool value);
    json(const int32_t value);
    json(const uint32_t value);
    json(const int64_t value);
    json(const uint64_t value);
    json(const float value);
    json(const double value);
    json(const char *value);
    json(const std::string &value);
    json(std::initializer_list<jsonKeyValue> entries);
    ~json();

    json& operator = (const json &other);

    // parse("{mode: 'Serial'}") reads a whole document; it throws
    // occa::exception on malformed input.
    static json parse(const char *&c);
    static json parse(const std::string &s);

    // dump(0) writes one line; dump(n) indents nested values by n spaces.
    std::string dump(const int indent = 2) const;

    bool isInitialized() const;
    bool isNull() const;
    bool isBool() const;
    bool isNumber() const;
    bool isString() const;
    bool isArray() const;
    bool isObject() const;

    // Keys may be paths: has("kernel/defines") looks into nested objects.
    bool has(const std::string &key) const;

    // The non-const operator[] turns the value into an object and creates the
    // entry (and the path to it); the const one returns a none value when the
    // key is missing.
    json& operator [] (const char *key);
    const json& operator [] (const char *key) const;
    json& operator [] (const std::string &key);
    const json& operator [] (const std::string &key) const;

    int size() const;

    // Reads: a missing value reads as false, 0 or "".
    bool boolean() const;
    double number() const;
    const std::string& string() const;

    operator bool () const;
    operator int32_t () const;
    operator int64_t () const;
    operator double () const;
    operator std::string () const;

    // get("key", default): the value at key converted to T, or the default.
    template <class T>
    T get(const char *key, const T &defaultValue = T()) const {
      if (!has(key)) {
        return defaultValue;
      }
      T out = (*this)[key];
      return out;
    }

    template <class T>
    T get(const std::string &key, const T &defaultValue = T()) const {
      return get<T>(key.c_str(), defaultValue);
    }
  };

  class jsonKeyValue {
   public:
    std::string name;
    json value;

    jsonKeyValue(const std::string &name_, const bool value_);
    jsonKeyValue(const std::string &name_, const int32_t value_);
    jsonKeyValue(const std::string &name_, const uint32_t value_);
    jsonKeyValue(const std::string &name_, const int64_t value_);
    jsonKeyValue(const std::string &name_, const uint64_t value_);
    jsonKeyValue(const std::string &name_, const float value_);
    jsonKeyValue(const std::string &name_, const double value_);
    jsonKeyValue(const std::string &name_, const char *value_);
    jsonKeyValue(const std::string &name_, const std::string &value_);
    jsonKeyValue(const std::string &name_, const json &value_);
    jsonKeyValue(const std::string &name_,
                 std::initializer_list<jsonKeyValue> value_);
  };

#if OCCA_STANDIN_VERSION < 10200
  // OCCA 1.0-1.1's property type: a json.
  class properties : public json {
   public:
    properties();
    properties(const json &other);
    properties(const char *text);
    properties(const std::string &text);
  };
#endif

  // libocca's settings; "version" holds its version string.
  json& settings();

  // ---[ dtype_t ]-------------------------------------------------------------
  // A named element type and its size in bytes.
  class dtype_t {
   private:
    std::string name_;
    int bytes_;

   public:
    dtype_t();
    dtype_t(const std::string &name__,
            const int bytes__ = 0,
            const bool registered_ = false);
    dtype_t(const dtype_t &other);
    dtype_t& operator = (const dtype_t &other_);
    ~dtype_t();

    const std::string& name() const;
    int bytes() const;

    bool operator == (const dtype_t &other) const;
    bool operator != (const dtype_t &other) const;
  };

  namespace dtype {
    extern const dtype_t none;
    extern const dtype_t void_;
    extern const dtype_t byte;
    extern const dtype_t bool_;
    extern const dtype_t char_;
    extern const dtype_t short_;
    extern const dtype_t int_;
    extern const dtype_t long_;
    extern const dtype_t float_;
    extern const dtype_t double_;
    extern const dtype_t int8;
    extern const dtype_t uint8;
    extern const dtype_t int16;
    extern const dtype_t uint16;
    extern const dtype_t int32;
    extern const dtype_t uint32;
    extern const dtype_t int64;
    extern const dtype_t uint64;

    // get<T>() for the primitive types below is exported by the library;
    // any other T has no element type (none, 0 bytes).
    template <class T>
    dtype_t get() {
      return none;
    }

    template <> dtype_t get<void>();
    template <> dtype_t get<bool>();
    template <> dtype_t get<char>();
    template <> dtype_t get<signed char>();
    template <> dtype_t get<unsigned char>();
    template <> dtype_t get<short>();
    template <> dtype_t get<unsigned short>();
    template <> dtype_t get<int>();
    template <> dtype_t get<unsigned int>();
    template <> dtype_t get<long>();
    template <> dtype_t get<unsigned long>();
    template <> dtype_t get<long long>();
    template <> dtype_t get<unsigned long long>();
    template <> dtype_t get<float>();
    template <> dtype_t get<double>();
  }

  // ---[ kernelArg ]-----------------------------------------------------------
  // One kernel argument: a value (copied as raw bytes), a host pointer, or a
  // memory object (kept as its mode object, not as a counted handle).
  class kernelArgData {
   public:
    union {
      int64_t int_;
      uint64_t uint_;
      double double_;
      float float_;
      void *ptr_;
      unsigned char bytes_[8];
    } value;
    udim_t size;
    bool isPointer;
    modeMemory_t *modeMemory;

    kernelArgData();
  };

  class kernelArg {
   public:
    std::vector<kernelArgData> args;

    kernelArg();
    kernelArg(const kernelArg &other);
    kernelArg& operator = (const kernelArg &other);
    ~kernelArg();

    kernelArg(const bool arg);
    kernelArg(const char arg);
    kernelArg(const signed char arg);
    kernelArg(const unsigned char arg);
    kernelArg(const short arg);
    kernelArg(const unsigned short arg);
    kernelArg(const int arg);
    kernelArg(const unsigned int arg);
    kernelArg(const long arg);
    kernelArg(const unsigned long arg);
    kernelArg(const long long arg);
    kernelArg(const unsigned long long arg);
    kernelArg(const float arg);
    kernelArg(const double arg);
    kernelArg(void *arg);
    kernelArg(const void *arg);
    kernelArg(const memory &arg);

    int size() const;
    const kernelArgData& operator [] (const int index) const;
  };

  // ---[ device ]--------------------------------------------------------------
  class device : public gc::ringEntry_t {
    friend class modeDevice_t;
    friend class kernel;
    friend class memory;

   private:
    mutable modeDevice_t *modeDevice;

   public:
    device();
    device(const std::string &props);
    device(const occa::OCCA_STANDIN_PROPS &props);
    device(modeDevice_t *modeDevice_);
    device(jsonInitializerList initializer);
    device(const occa::device &other);
    device& operator = (const occa::device &other);
    ~device();

   private:
    void assertInitialized() const;
    void setModeDevice(modeDevice_t *modeDevice_);
    void removeDeviceRef();

   public:
    // After dontUseRefs() the object is no longer freed when its last handle
    // goes: only an explicit free() releases it (what the C API does).
    void dontUseRefs();

    bool operator == (const occa::device &other) const;
    bool operator != (const occa::device &other) const;

    bool isInitialized() const;
    modeDevice_t* getModeDevice() const;

    // Every constructor and occa::setDevice() end in setup(const json&).
#if OCCA_STANDIN_VERSION >= 10200
    void setup(const std::string &props);
#endif
    void setup(const occa::OCCA_STANDIN_PROPS &props);

    // Frees the device and everything still allocated on it; every handle to
    // it becomes uninitialized.
    void free();

    const std::string& mode() const;
    const occa::json& properties() const;

    udim_t memoryAllocated() const;
    udim_t maxMemoryAllocated() const;

    void finish();
#if OCCA_STANDIN_VERSION >= 10400
    void finishAll();
#endif
    bool hasSeparateMemorySpace();

    stream createStream(const occa::OCCA_STANDIN_PROPS &props = occa::OCCA_STANDIN_PROPS());
    stream getStream();
    void setStream(stream s);

    streamTag tagStream();
    void waitFor(streamTag tag);
    double timeBetween(const streamTag &startTag,
                       const streamTag &endTag);

    occa::kernel buildKernel(const std::string &filename,
                             const std::string &kernelName,
                             const occa::OCCA_STANDIN_PROPS &props = occa::OCCA_STANDIN_PROPS()) const;

    occa::kernel buildKernelFromString(const std::string &content,
                                       const std::string &kernelName,
                                       const occa::OCCA_STANDIN_PROPS &props = occa::OCCA_STANDIN_PROPS()) const;

    template <class T = void>
    occa::memory malloc(const dim_t entries,
                        const void *src = NULL,
                        const occa::OCCA_STANDIN_PROPS &props = occa::OCCA_STANDIN_PROPS());

    template <class T = void>
    occa::memory malloc(const dim_t entries,
                        const occa::memory src,
                        const occa::OCCA_STANDIN_PROPS &props = occa::OCCA_STANDIN_PROPS());

    template <class T = void>
    occa::memory malloc(const dim_t entries,
                        const occa::OCCA_STANDIN_PROPS &props);

    // The one allocation entry point: every other malloc ends here.
    occa::memory malloc(const dim_t entries,
                        const dtype_t &dtype,
                        const void *src = NULL,
                        const occa::OCCA_STANDIN_PROPS &props = occa::OCCA_STANDIN_PROPS());

    occa::memory malloc(const dim_t entries,
                        const dtype_t &dtype,
                        const occa::memory src,
                        const occa::OCCA_STANDIN_PROPS &props = occa::OCCA_STANDIN_PROPS());

    occa::memory malloc(const dim_t entries,
                        const dtype_t &dtype,
                        const occa::OCCA_STANDIN_PROPS &props);

#if OCCA_STANDIN_VERSION >= 20000
    // Memory the application allocated: a view, not an allocation.
    occa::memory wrapMemory(const void *ptr,
                            const dim_t entries,
                            const dtype_t &dtype,
                            const occa::json &props = occa::json());
#endif

    memoryPool createMemoryPool(const occa::OCCA_STANDIN_PROPS &props = occa::OCCA_STANDIN_PROPS());
  };

  template <>
  occa::memory device::malloc<void>(const dim_t entries,
                                    const void *src,
                                    const occa::OCCA_STANDIN_PROPS &props);
  template <>
  occa::memory device::malloc<void>(const dim_t entries,
                                    const occa::memory src,
                                    const occa::OCCA_STANDIN_PROPS &props);
  template <>
  occa::memory device::malloc<void>(const dim_t entries,
                                    const occa::OCCA_STANDIN_PROPS &props);

  // ---[ kernel ]--------------------------------------------------------------
  class kernel : public gc::ringEntry_t {
    friend class modeKernel_t;
    friend class device;

   private:
    modeKernel_t *modeKernel;
#ifdef OCCA_STANDIN_NEKRS
    // nekRS's OCCA keeps the kernel's hash in the handle (its hash_t: 104
    // bytes), so its kernel handle is 128 bytes, not 24.
    struct hash_t {
      bool initialized;
      int h[8];
      std::string h_string;
      int sh[8];
      hash_t();
    } hash_;
#endif
#ifdef OCCA_STANDIN_KERNEL_PAD
    // A layout no known OCCA has: a kernel handle too large to hold.
    unsigned char pad_[OCCA_STANDIN_KERNEL_PAD];
#endif

   public:
    kernel();
    kernel(modeKernel_t *modeKernel_);
    kernel(const kernel &k);
    kernel& operator = (const kernel &k);
    kernel& operator = (modeKernel_t *modeKernel_);
    ~kernel();

   private:
    void assertInitialized() const;
    void setModeKernel(modeKernel_t *modeKernel_);
    void removeKernelRef();

   public:
    void dontUseRefs();

    bool isInitialized();

    const std::string& mode() const;
    const occa::json& properties() const;
    modeKernel_t* getModeKernel() const;
    occa::device getDevice();

    bool operator == (const occa::kernel &other) const;
    bool operator != (const occa::kernel &other) const;

    // Not const, as in OCCA.
    const std::string& name();
    const std::string& sourceFilename();
    const std::string& binaryFilename();

    void pushArg(const kernelArg &arg);
    void clearArgs();

    // The one launch entry point: every operator() and run({...}) end here.
    void run() const;
#if OCCA_STANDIN_VERSION >= 10200
    void run(std::initializer_list<kernelArg> args) const;
#endif

    void operator () () const;
    void operator () (const kernelArg &arg1) const;
    void operator () (const kernelArg &arg1, const kernelArg &arg2) const;
    void operator () (const kernelArg &arg1, const kernelArg &arg2,
                      const kernelArg &arg3) const;
    void operator () (const kernelArg &arg1, const kernelArg &arg2,
                      const kernelArg &arg3, const kernelArg &arg4) const;
    void operator () (const kernelArg &arg1, const kernelArg &arg2,
                      const kernelArg &arg3, const kernelArg &arg4,
                      const kernelArg &arg5) const;
    void operator () (const kernelArg &arg1, const kernelArg &arg2,
                      const kernelArg &arg3, const kernelArg &arg4,
                      const kernelArg &arg5, const kernelArg &arg6) const;
    void operator () (const kernelArg &arg1, const kernelArg &arg2,
                      const kernelArg &arg3, const kernelArg &arg4,
                      const kernelArg &arg5, const kernelArg &arg6,
                      const kernelArg &arg7) const;
    void operator () (const kernelArg &arg1, const kernelArg &arg2,
                      const kernelArg &arg3, const kernelArg &arg4,
                      const kernelArg &arg5, const kernelArg &arg6,
                      const kernelArg &arg7, const kernelArg &arg8) const;
    void operator () (const kernelArg &arg1, const kernelArg &arg2,
                      const kernelArg &arg3, const kernelArg &arg4,
                      const kernelArg &arg5, const kernelArg &arg6,
                      const kernelArg &arg7, const kernelArg &arg8,
                      const kernelArg &arg9) const;
    void operator () (const kernelArg &arg1, const kernelArg &arg2,
                      const kernelArg &arg3, const kernelArg &arg4,
                      const kernelArg &arg5, const kernelArg &arg6,
                      const kernelArg &arg7, const kernelArg &arg8,
                      const kernelArg &arg9, const kernelArg &arg10) const;
    void operator () (const kernelArg &arg1, const kernelArg &arg2,
                      const kernelArg &arg3, const kernelArg &arg4,
                      const kernelArg &arg5, const kernelArg &arg6,
                      const kernelArg &arg7, const kernelArg &arg8,
                      const kernelArg &arg9, const kernelArg &arg10,
                      const kernelArg &arg11) const;
    void operator () (const kernelArg &arg1, const kernelArg &arg2,
                      const kernelArg &arg3, const kernelArg &arg4,
                      const kernelArg &arg5, const kernelArg &arg6,
                      const kernelArg &arg7, const kernelArg &arg8,
                      const kernelArg &arg9, const kernelArg &arg10,
                      const kernelArg &arg11, const kernelArg &arg12) const;
    void operator () (const kernelArg &arg1, const kernelArg &arg2,
                      const kernelArg &arg3, const kernelArg &arg4,
                      const kernelArg &arg5, const kernelArg &arg6,
                      const kernelArg &arg7, const kernelArg &arg8,
                      const kernelArg &arg9, const kernelArg &arg10,
                      const kernelArg &arg11, const kernelArg &arg12,
                      const kernelArg &arg13) const;
    void operator () (const kernelArg &arg1, const kernelArg &arg2,
                      const kernelArg &arg3, const kernelArg &arg4,
                      const kernelArg &arg5, const kernelArg &arg6,
                      const kernelArg &arg7, const kernelArg &arg8,
                      const kernelArg &arg9, const kernelArg &arg10,
                      const kernelArg &arg11, const kernelArg &arg12,
                      const kernelArg &arg13, const kernelArg &arg14) const;
    void operator () (const kernelArg &arg1, const kernelArg &arg2,
                      const kernelArg &arg3, const kernelArg &arg4,
                      const kernelArg &arg5, const kernelArg &arg6,
                      const kernelArg &arg7, const kernelArg &arg8,
                      const kernelArg &arg9, const kernelArg &arg10,
                      const kernelArg &arg11, const kernelArg &arg12,
                      const kernelArg &arg13, const kernelArg &arg14,
                      const kernelArg &arg15) const;
    void operator () (const kernelArg &arg1, const kernelArg &arg2,
                      const kernelArg &arg3, const kernelArg &arg4,
                      const kernelArg &arg5, const kernelArg &arg6,
                      const kernelArg &arg7, const kernelArg &arg8,
                      const kernelArg &arg9, const kernelArg &arg10,
                      const kernelArg &arg11, const kernelArg &arg12,
                      const kernelArg &arg13, const kernelArg &arg14,
                      const kernelArg &arg15, const kernelArg &arg16) const;

    void free();
  };

  // ---[ memory ]--------------------------------------------------------------
  class memory : public gc::ringEntry_t {
    friend class modeMemory_t;
    friend class device;
    friend class kernelArg;

   private:
    modeMemory_t *modeMemory;

   public:
    memory();
    memory(modeMemory_t *modeMemory_);
    memory(const memory &m);
    memory& operator = (const memory &m);
    ~memory();

   private:
    void assertInitialized() const;
    void setModeMemory(modeMemory_t *modeMemory_);
    void removeMemoryRef();

   public:
    void dontUseRefs();

    bool isInitialized() const;

    // OCCA exports only the <void> specializations of ptr().
    template <class T = void>
    T* ptr();

    template <class T = void>
    const T* ptr() const;

    modeMemory_t* getModeMemory() const;
    modeDevice_t* getModeDevice() const;
    occa::device getDevice() const;

    const std::string& mode() const;
    const occa::json& properties() const;

    void setDtype(const dtype_t &dtype__);
    const dtype_t& dtype() const;

    // length() counts elements of dtype(); byte_size() bytes; size() bytes
    // before OCCA 2.0, elements from 2.0.
    udim_t size() const;
    udim_t length() const;
#if OCCA_STANDIN_VERSION >= 20000
    udim_t byte_size() const;
#endif

    bool operator == (const occa::memory &other) const;
    bool operator != (const occa::memory &other) const;

    occa::memory operator + (const dim_t offset) const;

    // A view of count elements from element offset (count -1: to the end),
    // sharing this memory's buffer: not an allocation.
    occa::memory slice(const dim_t offset,
                       const dim_t count = -1) const;

    // Copies: count and offsets are in elements of the dtype of the memory
    // whose dtype the OCCA rule names (see standin.cpp), bytes before OCCA
    // 2.0; count -1 copies the whole memory.
    void copyFrom(const void *src,
                  const dim_t count = -1,
                  const dim_t offset = 0,
                  const occa::OCCA_STANDIN_PROPS &props = occa::OCCA_STANDIN_PROPS());

    void copyFrom(const void *src,
                  const occa::OCCA_STANDIN_PROPS &props);

    void copyFrom(const memory src,
                  const dim_t count = -1,
                  const dim_t destOffset = 0,
                  const dim_t srcOffset = 0,
                  const occa::OCCA_STANDIN_PROPS &props = occa::OCCA_STANDIN_PROPS());

    void copyFrom(const memory src,
                  const occa::OCCA_STANDIN_PROPS &props);

    void copyTo(void *dest,
                const dim_t count = -1,
                const dim_t offset = 0,
                const occa::OCCA_STANDIN_PROPS &props = occa::OCCA_STANDIN_PROPS()) const;

    void copyTo(void *dest,
                const occa::OCCA_STANDIN_PROPS &props) const;

    void copyTo(const memory dest,
                const dim_t count = -1,
                const dim_t destOffset = 0,
                const dim_t srcOffset = 0,
                const occa::OCCA_STANDIN_PROPS &props = occa::OCCA_STANDIN_PROPS()) const;

    void copyTo(const memory dest,
                const occa::OCCA_STANDIN_PROPS &props) const;

    // A new allocation (through device::malloc) holding a copy.
    occa::memory clone() const;

    // Frees at once; every handle to this memory becomes uninitialized.
    void free();
  };

  template <>
  void* memory::ptr<void>();

  template <>
  const void* memory::ptr<void>() const;

  template <class T>
  T* memory::ptr() {
    return (T*) ptr<void>();
  }

  template <class T>
  const T* memory::ptr() const {
    return (const T*) ptr<void>();
  }

  // ---[ memoryPool ]----------------------------------------------------------
  OCCA_STANDIN_POOL_BEGIN
  class memoryPool : public gc::ringEntry_t {
    friend class occa::modeMemoryPool_t;

   private:
    modeMemoryPool_t *modeMemoryPool;

   public:
    memoryPool();
    memoryPool(modeMemoryPool_t *modeMemoryPool_);
    memoryPool(const memoryPool &m);
    memoryPool& operator = (const memoryPool &m);
    ~memoryPool();

   private:
    void assertInitialized() const;
    void setModeMemoryPool(modeMemoryPool_t *modeMemoryPool_);
    void removeMemoryPoolRef();

   public:
    void dontUseRefs();

    bool isInitialized() const;

    modeMemoryPool_t* getModeMemoryPool() const;
    modeDevice_t* getModeDevice() const;
    occa::device getDevice() const;

    udim_t size() const;
    udim_t reserved() const;
    udim_t numReservations() const;

    void resize(const udim_t bytes);
    void free();

    // Reservations are views of the pool's buffer: they do not go through
    // device::malloc.
    template <class T = void>
    occa::memory reserve(const dim_t entries);

    occa::memory reserve(const dim_t entries,
                         const dtype_t &dtype);
  };

  template <>
  occa::memory memoryPool::reserve<void>(const dim_t entries);

  template <class T>
  occa::memory memoryPool::reserve(const dim_t entries) {
    return reserve(entries, occa::dtype::get<T>());
  }
  OCCA_STANDIN_POOL_END

  // ---[ stream, streamTag ]---------------------------------------------------
  class stream : public gc::ringEntry_t {
    friend class modeStream_t;
    friend class device;

   private:
    modeStream_t *modeStream;

   public:
    stream();
    stream(modeStream_t *modeStream_);
    stream(const stream &s);
    stream& operator = (const stream &m);
    ~stream();

   private:
    void setModeStream(modeStream_t *modeStream_);
    void removeStreamRef();

   public:
    void dontUseRefs();

    bool isInitialized() const;
    modeStream_t* getModeStream() const;
    modeDevice_t* getModeDevice() const;
    occa::device getDevice() const;

    const std::string& mode() const;
    const occa::json& properties() const;

    bool operator == (const occa::stream &other) const;
    bool operator != (const occa::stream &other) const;

    void free();
#if OCCA_STANDIN_VERSION >= 10400
    void finish();
#endif
  };

  class streamTag : public gc::ringEntry_t {
    friend class modeStreamTag_t;
    friend class device;

   private:
    modeStreamTag_t *modeStreamTag;

   public:
    streamTag();
    streamTag(modeStreamTag_t *modeStreamTag_);
    streamTag(const streamTag &s);
    streamTag& operator = (const streamTag &m);
    ~streamTag();

   private:
    void setModeStreamTag(modeStreamTag_t *modeStreamTag_);
    void removeStreamTagRef();

   public:
    void dontUseRefs();

    bool isInitialized() const;
    modeStreamTag_t* getModeStreamTag() const;
    modeDevice_t* getModeDevice() const;
    occa::device getDevice() const;

    void wait() const;

    bool operator == (const occa::streamTag &other) const;
    bool operator != (const occa::streamTag &other) const;

    void free();
  };

  // ---[ Free functions on the thread's current device ]----------------------
  // getDevice() starts as host(), a Serial device created on first use and
  // never freed, as in OCCA.
  device host();
  device& getDevice();
  void setDevice(device d);
  void setDevice(const std::string &props);
  void setDevice(const occa::OCCA_STANDIN_PROPS &props);

  void finish();
  stream createStream(const occa::OCCA_STANDIN_PROPS &props = occa::OCCA_STANDIN_PROPS());
  stream getStream();
  void setStream(stream s);
  streamTag tagStream();

  kernel buildKernel(const std::string &filename,
                     const std::string &kernelName,
                     const occa::OCCA_STANDIN_PROPS &props = occa::OCCA_STANDIN_PROPS());

  kernel buildKernelFromString(const std::string &content,
                               const std::string &kernelName,
                               const occa::OCCA_STANDIN_PROPS &props = occa::OCCA_STANDIN_PROPS());

  occa::memory malloc(const dim_t entries,
                      const dtype_t &dtype,
                      const void *src = NULL,
                      const occa::OCCA_STANDIN_PROPS &props = occa::OCCA_STANDIN_PROPS());

  template <class T = void>
  occa::memory malloc(const dim_t entries,
                      const void *src = NULL,
                      const occa::OCCA_STANDIN_PROPS &props = occa::OCCA_STANDIN_PROPS());

  template <>
  occa::memory malloc<void>(const dim_t entries,
                            const void *src,
                            const occa::OCCA_STANDIN_PROPS &props);

  template <class T>
  occa::memory malloc(const dim_t entries,
                      const void *src,
                      const occa::OCCA_STANDIN_PROPS &props) {
    return malloc(entries, occa::dtype::get<T>(), src, props);
  }

  // memcpy(dest, src, ...): forwards to dest.copyFrom / src.copyTo.
  void memcpy(memory dest, const void *src,
              const dim_t count = -1,
              const dim_t offset = 0,
              const occa::OCCA_STANDIN_PROPS &props = occa::OCCA_STANDIN_PROPS());

  void memcpy(void *dest, memory src,
              const dim_t count = -1,
              const dim_t offset = 0,
              const occa::OCCA_STANDIN_PROPS &props = occa::OCCA_STANDIN_PROPS());

  void memcpy(memory dest, memory src,
              const dim_t count = -1,
              const dim_t destOffset = 0,
              const dim_t srcOffset = 0,
              const occa::OCCA_STANDIN_PROPS &props = occa::OCCA_STANDIN_PROPS());

  void memcpy(memory dest, const void *src,
              const occa::OCCA_STANDIN_PROPS &props);

  void memcpy(void *dest, memory src,
              const occa::OCCA_STANDIN_PROPS &props);

  void memcpy(memory dest, memory src,
              const occa::OCCA_STANDIN_PROPS &props);

  void free(device d);
  void free(stream s);
  void free(kernel k);
  void free(memory m);

  // ---[ Templates of device (after memory is complete) ]---------------------
  template <class T>
  occa::memory device::malloc(const dim_t entries,
                              const void *src,
                              const occa::OCCA_STANDIN_PROPS &props) {
    return malloc(entries, occa::dtype::get<T>(), src, props);
  }

  template <class T>
  occa::memory device::malloc(const dim_t entries,
                              const occa::memory src,
                              const occa::OCCA_STANDIN_PROPS &props) {
    return malloc(entries, occa::dtype::get<T>(), src, props);
  }

  template <class T>
  occa::memory device::malloc(const dim_t entries,
                              const occa::OCCA_STANDIN_PROPS &props) {
    return malloc(entries, occa::dtype::get<T>(), props);
  }
}

#endif
