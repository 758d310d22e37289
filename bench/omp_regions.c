/* Counts the OpenMP parallel regions a process starts (calls of libgomp's GOMP_parallel), for the number of
 * regions per tree (bench/results/regressor.md, "Parallel regions per tree"): with OMP_WAIT_POLICY=passive each
 * region's start wakes the sleeping threads. Build and use:
 *   gcc -O2 -shared -fPIC bench/omp_regions.c -o /tmp/omp_regions.so -ldl
 *   LD_PRELOAD=/tmp/omp_regions.so python ...   (then ctypes.CDLL("/tmp/omp_regions.so").omp_regions())
 * Counts GOMP_parallel only (GCC's libgomp; a region of one thread is not started by parallel_for at all). */
#define _GNU_SOURCE
#include <dlfcn.h>

typedef void (*gomp_parallel_fn)(void (*)(void *), void *, unsigned, unsigned);
static long regions;

long omp_regions(void) { return __atomic_load_n(&regions, __ATOMIC_RELAXED); }

void GOMP_parallel(void (*fn)(void *), void *data, unsigned n_threads, unsigned flags) {
  static gomp_parallel_fn real;
  if (!real) { /* the extension's libgomp is loaded locally: look it up by name, not RTLD_NEXT */
    void *gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD);
    real = (gomp_parallel_fn)dlsym(gomp ? gomp : dlopen("libgomp.so.1", RTLD_NOW), "GOMP_parallel");
  }
  __atomic_add_fetch(&regions, 1, __ATOMIC_RELAXED);
  real(fn, data, n_threads, flags);
}
