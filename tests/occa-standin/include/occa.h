/* occa.h: the C API of the OCCA stand-in (tests/occa-standin).
 *
 * Not OCCA: a test library exporting a subset of OCCA 2.0's C functions
 * under the same names and signatures. occaType has the same size and field
 * layout as OCCA's (a 32-byte struct passed by value), and the type codes and
 * the magic header value are the ones OCCA's ABI uses, so that an interposer
 * that decodes an occaType works against both libraries. An object's occaType
 * holds a pointer to its mode object (modeDevice_t*, modeMemory_t*, ...).
 *
 * Compiles as C99 and as C++.
 */
#ifndef OCCA_STANDIN_OCCA_H
#define OCCA_STANDIN_OCCA_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int64_t occaDim_t;
typedef uint64_t occaUDim_t;

/* Every C object is one of these, passed by value. */
typedef struct {
  int magicHeader;          /* OCCA_C_TYPE_MAGIC_HEADER for a defined value */
  int type;                 /* one of the OCCA_* type codes below */
  occaUDim_t bytes;         /* size of the value (pointer size for objects) */
  bool needsFree;
  union {
    uint8_t uint8_;
    uint16_t uint16_;
    uint32_t uint32_;
    uint64_t uint64_;
    int8_t int8_;
    int16_t int16_;
    int32_t int32_;
    int64_t int64_;
    float float_;
    double double_;
    char *ptr;
  } value;
} occaType;

#define OCCA_C_TYPE_MAGIC_HEADER 0x3030CE64

typedef occaType occaDevice;
typedef occaType occaKernel;
typedef occaType occaMemory;
typedef occaType occaMemoryPool;
typedef occaType occaStream;
typedef occaType occaStreamTag;
typedef occaType occaDtype;
typedef occaType occaJson;

/* Type codes (values as in OCCA's ABI). */
extern const int OCCA_UNDEFINED;
extern const int OCCA_DEFAULT;
extern const int OCCA_NULL;
extern const int OCCA_PTR;
extern const int OCCA_BOOL;
extern const int OCCA_INT8;
extern const int OCCA_UINT8;
extern const int OCCA_INT16;
extern const int OCCA_UINT16;
extern const int OCCA_INT32;
extern const int OCCA_UINT32;
extern const int OCCA_INT64;
extern const int OCCA_UINT64;
extern const int OCCA_FLOAT;
extern const int OCCA_DOUBLE;
extern const int OCCA_STRUCT;
extern const int OCCA_STRING;
extern const int OCCA_DEVICE;
extern const int OCCA_KERNEL;
extern const int OCCA_KERNELBUILDER;
extern const int OCCA_MEMORY;
extern const int OCCA_MEMORYPOOL;
extern const int OCCA_STREAM;
extern const int OCCA_STREAMTAG;
extern const int OCCA_DTYPE;
extern const int OCCA_SCOPE;
extern const int OCCA_JSON;

extern const occaType occaNull;
extern const occaType occaUndefined;
extern const occaType occaDefault;
extern const occaType occaTrue;
extern const occaType occaFalse;
/* As a count: "everything" (-1 in the C++ API). */
extern const occaUDim_t occaAllBytes;

extern const occaDtype occaDtypeNone;
extern const occaDtype occaDtypeVoid;
extern const occaDtype occaDtypeByte;
extern const occaDtype occaDtypeBool;
extern const occaDtype occaDtypeChar;
extern const occaDtype occaDtypeShort;
extern const occaDtype occaDtypeInt;
extern const occaDtype occaDtypeLong;
extern const occaDtype occaDtypeFloat;
extern const occaDtype occaDtypeDouble;

/* ---[ Values ]------------------------------------------------------------ */
bool occaIsUndefined(occaType value);
bool occaIsDefault(occaType value);
occaType occaPtr(const void *value);
occaType occaBool(bool value);
occaType occaInt32(int32_t value);
occaType occaUInt32(uint32_t value);
occaType occaInt64(int64_t value);
occaType occaUInt64(uint64_t value);
occaType occaInt(int value);
occaType occaUInt(unsigned int value);
occaType occaLong(long value);
occaType occaULong(unsigned long value);
occaType occaFloat(float value);
occaType occaDouble(double value);
occaType occaString(const char *str);

/* Frees the object (device, kernel, memory, stream, ...) the value names. */
void occaFree(occaType *value);

/* ---[ json ]-------------------------------------------------------------- */
occaJson occaCreateJson(void);
occaJson occaJsonParse(const char *c);
const char* occaJsonDump(occaJson j, const int indent);

/* ---[ Global device ]----------------------------------------------------- */
occaDevice occaHost(void);
occaDevice occaGetDevice(void);
void occaSetDevice(occaDevice device);
void occaSetDeviceFromString(const char *info);
void occaFinish(void);
occaStream occaCreateStream(occaJson props);
occaStream occaGetStream(void);
void occaSetStream(occaStream stream);
occaStreamTag occaTagStream(void);
double occaTimeBetweenTags(occaStreamTag startTag, occaStreamTag endTag);

/* ---[ Device ]------------------------------------------------------------ */
occaDevice occaCreateDevice(occaType info);
occaDevice occaCreateDeviceFromString(const char *info);
bool occaDeviceIsInitialized(occaDevice device);
const char* occaDeviceMode(occaDevice device);
void occaDeviceFinish(occaDevice device);
occaStream occaDeviceCreateStream(occaDevice device, occaJson props);
occaStream occaDeviceGetStream(occaDevice device);
void occaDeviceSetStream(occaDevice device, occaStream stream);
occaStreamTag occaDeviceTagStream(occaDevice device);
void occaDeviceWaitForTag(occaDevice device, occaStreamTag tag);
double occaDeviceTimeBetweenTags(occaDevice device,
                                 occaStreamTag startTag,
                                 occaStreamTag endTag);

occaKernel occaDeviceBuildKernel(occaDevice device,
                                 const char *filename,
                                 const char *kernelName,
                                 const occaJson props);
occaKernel occaDeviceBuildKernelFromString(occaDevice device,
                                           const char *str,
                                           const char *kernelName,
                                           const occaJson props);

occaMemory occaDeviceMalloc(occaDevice device,
                            const occaUDim_t bytes,
                            const void *src,
                            occaJson props);
occaMemory occaDeviceTypedMalloc(occaDevice device,
                                 const occaUDim_t entries,
                                 const occaDtype dtype,
                                 const void *src,
                                 occaJson props);

/* ---[ Memory ]------------------------------------------------------------ */
bool occaMemoryIsInitialized(occaMemory memory);
void* occaMemoryPtr(occaMemory memory);
occaUDim_t occaMemorySize(occaMemory memory);

/* Despite the parameter names (OCCA's), counts and offsets are passed on to
 * the C++ copies unchanged: they are in elements of the memory's dtype, which
 * is bytes only for an occaDeviceMalloc allocation. occaAllBytes: all. */
void occaCopyMemToMem(occaMemory dest, occaMemory src,
                      const occaUDim_t bytes,
                      const occaUDim_t destOffset,
                      const occaUDim_t srcOffset,
                      occaJson props);
void occaCopyPtrToMem(occaMemory dest,
                      const void *src,
                      const occaUDim_t bytes,
                      const occaUDim_t offset,
                      occaJson props);
void occaCopyMemToPtr(void *dest,
                      occaMemory src,
                      const occaUDim_t bytes,
                      const occaUDim_t offset,
                      occaJson props);

/* ---[ Kernel ]------------------------------------------------------------ */
bool occaKernelIsInitialized(occaKernel kernel);
const char* occaKernelName(occaKernel kernel);
const char* occaKernelBinaryFilename(occaKernel kernel);
void occaKernelPushArg(occaKernel kernel, occaType arg);
void occaKernelClearArgs(occaKernel kernel);
void occaKernelRunFromArgs(occaKernel kernel);
/* occaKernelRunN -> occaKernelVaRun -> occa::kernel::run(). */
void occaKernelRunN(occaKernel kernel, const int argc, ...);
void occaKernelVaRun(occaKernel kernel, const int argc, va_list args);
void occaKernelRunWithArgs(occaKernel kernel, const int argc, occaType *args);

/* ---[ Stream ]------------------------------------------------------------ */
void occaStreamFinish(occaStream stream);

#ifdef __cplusplus
}
#endif

/* occaKernelRun(kernel, args...): occaKernelRunN with the argument count
 * (1 to 16 arguments). */
#define OCCA_STANDIN_NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, \
                            _12, _13, _14, _15, _16, N, ...) N
#define OCCA_STANDIN_NARGS(...)                                           \
  OCCA_STANDIN_NARGS_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, \
                      5, 4, 3, 2, 1, 0)
#define occaKernelRun(kernel, ...)                                        \
  occaKernelRunN(kernel, OCCA_STANDIN_NARGS(__VA_ARGS__), __VA_ARGS__)

#endif
