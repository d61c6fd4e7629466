/* A stand-in for libocca.so: built as a shared library named libocca.so, so
 * that the preload shim takes a program linking it for an OCCA application. */
int occa_standin_value(void) { return 42; }
