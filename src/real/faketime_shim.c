/* lockstorm: preloaded before libfaketime so that redis-server starts under it.
 *
 * Debian's redis-server allocates with jemalloc; libfaketime allocates while it sets
 * itself up, jemalloc's own setup reads the clock, and that clock call re-enters
 * libfaketime before it is ready: the server hangs at start. Sending the allocator
 * entry points straight to glibc breaks the cycle. Every allocation of the process then
 * goes to glibc, so free() and malloc_usable_size() must go there too. */
#define _GNU_SOURCE
#include <stddef.h>
#include <dlfcn.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

void *malloc(size_t n) { return __libc_malloc(n); }
void *calloc(size_t n, size_t m) { return __libc_calloc(n, m); }
void *realloc(void *p, size_t n) { return __libc_realloc(p, n); }
void free(void *p) { __libc_free(p); }
void *memalign(size_t a, size_t n) { return __libc_memalign(a, n); }
void *aligned_alloc(size_t a, size_t n) { return __libc_memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n) {
    void *p = __libc_memalign(a, n);
    if (!p) return 12; /* ENOMEM */
    *out = p;
    return 0;
}

/* glibc's malloc_usable_size has no __libc_ alias: look it up in libc itself. */
size_t malloc_usable_size(void *p) {
    static size_t (*real)(void *);
    if (!real) {
        void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
        real = (size_t (*)(void *))dlsym(libc, "malloc_usable_size");
    }
    return p ? real(p) : 0;
}

/* libfaketime 0.9.10 answers EINVAL to clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)
 * under DONT_FAKE_MONOTONIC=1: it converts the deadline as if the monotonic clock were
 * faked. CPython 3.11's time.sleep() sleeps exactly that way (adapters/README.md). With
 * the monotonic clock left real the deadline is a real one: hand it to the kernel. */
#include <errno.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req, struct timespec *rem) {
    static int (*next)(clockid_t, int, const struct timespec *, struct timespec *);
    const char *real_monotonic = getenv("DONT_FAKE_MONOTONIC");
    if (clock == CLOCK_MONOTONIC && real_monotonic && real_monotonic[0] == '1')
        return syscall(SYS_clock_nanosleep, clock, flags, req, rem) == -1 ? errno : 0;
    if (!next)
        next = (int (*)(clockid_t, int, const struct timespec *, struct timespec *))dlsym(RTLD_NEXT, "clock_nanosleep");
    return next(clock, flags, req, rem);
}
