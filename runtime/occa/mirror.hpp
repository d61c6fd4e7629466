// mirror.hpp: just enough of OCCA's C++ classes for the adapter to define
// functions with the same mangled names as libocca's and to pass their
// handles around with the same calling convention.
//
// Written from OCCA 2.x's documented public signatures; no OCCA code. What
// matters to the ABI, and so is mirrored exactly:
//   - namespaces, class names, member names, parameter types and constness
//     (they make the mangled names the dynamic linker matches);
//   - handles (device, kernel, memory, stream, streamTag, memoryPool) have a
//     user-provided copy constructor and destructor, so like OCCA's they are
//     passed and returned in memory ("non-trivial for the purposes of
//     calls"). Their size here (two ring pointers and the mode pointer, as
//     in OCCA 2.0) is NOT relied on: libocca's may be larger (nekRS's
//     kernel is 128 bytes), so the adapter never creates a handle in storage
//     of this size. Handles libocca returns are built in oversized storage
//     (ot_occa::Held) or directly in the caller's slot; handle parameters
//     passed by value are forwarded by address (adapter.hpp, Real).
// The copy constructor and destructor forward to libocca's own (resolved by
// name at the first hook), so a handle the adapter copies or drops behaves
// exactly as OCCA's. Every other member declared here is either a hook (defined in the
// adapter, exported) or never defined: the adapter calls libocca's versions
// through pointers (real.hpp), never by these declarations.
#ifndef OCCA_TOOLS_OCCA_MIRROR_HPP
#define OCCA_TOOLS_OCCA_MIRROR_HPP

#include <cstdint>
#include <initializer_list>
#include <string>

#define OT_HOOK __attribute__((visibility("default")))

namespace occa {
typedef int64_t dim_t;
typedef uint64_t udim_t;

class json;
class properties;  // OCCA 1.0-1.1's property type: a json (derived from it)
class dtype_t;
class kernelArg;
class modeDevice_t;
class modeKernel_t;
class modeMemory_t;
class modeStream_t;
class modeStreamTag_t;
class modeMemoryPool_t;
class memory;
class kernel;
class stream;
class streamTag;

namespace gc {
class ringEntry_t {
 protected:
  void *left_;
  void *right_;
};
}  // namespace gc

namespace ot_mirror {
// Copies and destroys a handle of each class with libocca's own functions
// (real.cpp).
void copy_handle(int cls, void *self, const void *other);
void destroy_handle(int cls, void *self);
enum { DEVICE, KERNEL, MEMORY, STREAM, STREAM_TAG, HANDLE_CLASSES };
}  // namespace ot_mirror

#define OT_HANDLE(cls, id)                                                       \
 public:                                                                         \
  cls(const cls &o) { ot_mirror::copy_handle(ot_mirror::id, this, &o); }        \
  ~cls() { ot_mirror::destroy_handle(ot_mirror::id, this); }                     \
  cls &operator=(const cls &) = delete;                                          \
  /* The mode object, read from the handle's layout (see kernel_info). */        \
  void *mode_in_layout() const { return mode_; }                                 \
                                                                                 \
 private:                                                                        \
  void *mode_;

class device : public gc::ringEntry_t {
  OT_HANDLE(device, DEVICE)
 public:
  // Hooks.
  OT_HOOK void setup(const std::string &props);
  OT_HOOK void setup(const occa::json &props);
  OT_HOOK void setup(const occa::properties &props);
  OT_HOOK void free();
  OT_HOOK void finish();
  OT_HOOK void finishAll();
  OT_HOOK occa::stream createStream(const occa::json &props);
  OT_HOOK occa::stream createStream(const occa::properties &props);
  OT_HOOK void setStream(occa::stream s);
  OT_HOOK occa::kernel buildKernel(const std::string &filename, const std::string &kernelName,
                                   const occa::json &props) const;
  OT_HOOK occa::kernel buildKernel(const std::string &filename, const std::string &kernelName,
                                   const occa::properties &props) const;
  OT_HOOK occa::memory malloc(const dim_t entries, const dtype_t &dtype, const void *src,
                              const occa::json &props);
  OT_HOOK occa::memory malloc(const dim_t entries, const dtype_t &dtype, const void *src,
                              const occa::properties &props);
};

class kernel : public gc::ringEntry_t {
  OT_HANDLE(kernel, KERNEL)
 public:
  // Hooks: run() and every operator() overload (kernel_ops.inc) are launches.
  OT_HOOK void run() const;
  // A clang-built libocca inlines run() here.
  OT_HOOK void run(std::initializer_list<occa::kernelArg> args) const;
#include "kernel_ops_decl.inc"
};

class memory : public gc::ringEntry_t {
  OT_HANDLE(memory, MEMORY)
 public:
  // Hooks.
  OT_HOOK void copyFrom(const void *src, const dim_t count, const dim_t offset,
                        const occa::json &props);
  OT_HOOK void copyFrom(const memory src, const dim_t count, const dim_t destOffset,
                        const dim_t srcOffset, const occa::json &props);
  OT_HOOK void copyTo(void *dest, const dim_t count, const dim_t offset,
                      const occa::json &props) const;
  OT_HOOK void copyTo(const memory dest, const dim_t count, const dim_t destOffset,
                      const dim_t srcOffset, const occa::json &props) const;
  // OCCA 1.0-1.1 (counts in bytes, as in every OCCA before 2.0).
  OT_HOOK void copyFrom(const void *src, const dim_t count, const dim_t offset,
                        const occa::properties &props);
  OT_HOOK void copyFrom(const memory src, const dim_t count, const dim_t destOffset,
                        const dim_t srcOffset, const occa::properties &props);
  OT_HOOK void copyTo(void *dest, const dim_t count, const dim_t offset,
                      const occa::properties &props) const;
  OT_HOOK void copyTo(const memory dest, const dim_t count, const dim_t destOffset,
                      const dim_t srcOffset, const occa::properties &props) const;
  OT_HOOK void free();
};

class stream : public gc::ringEntry_t {
  OT_HANDLE(stream, STREAM)
 public:
  OT_HOOK void finish();
};

class streamTag : public gc::ringEntry_t {
  OT_HANDLE(streamTag, STREAM_TAG)
};

class memoryPool : public gc::ringEntry_t {
  // Never copied or destroyed by the adapter: it only receives `this`.
  memoryPool(const memoryPool &);
  ~memoryPool();
  void *mode_;

 public:
  OT_HOOK occa::memory reserve(const dim_t entries, const dtype_t &dtype);
};

namespace experimental {
// OCCA 1.5-1.6's pool (nekRS v23).
class memoryPool : public gc::ringEntry_t {
  memoryPool(const memoryPool &);
  ~memoryPool();
  void *mode_;

 public:
  OT_HOOK occa::memory reserve(const dim_t entries, const dtype_t &dtype);
};
}  // namespace experimental

#undef OT_HANDLE
}  // namespace occa

#endif
