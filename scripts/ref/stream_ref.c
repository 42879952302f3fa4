/*
 * stream_ref: a C reference for perflab's STREAM-style bandwidth kernels.
 *
 * Usage:   stream_ref KERNEL ELEMENTS THREADS SECONDS
 *          KERNEL is one of read, write, copy, scale, add, triad; ELEMENTS is the length of
 *          each array (shared among the threads); SECONDS how long to keep running passes.
 * Build:   cc -O3 -march=native -fopenmp -o stream_ref stream_ref.c
 * Output:  one line, e.g.
 *          kernel=triad threads=2 elements=134217728 bytes_per_sec=2.1e+10 passes=57
 *
 * The kernels and the byte counting are those of perflab's bandwidth workload (STREAM's):
 *   read   sum += a[i]             8 bytes per element
 *   write  a[i] = v (v per pass)   8
 *   copy   c[i] = a[i]             16
 *   scale  b[i] = q * c[i]         16
 *   add    c[i] = a[i] + b[i]      24
 *   triad  a[i] = b[i] + q * c[i]  24
 * Each is an OpenMP parallel for with a static schedule; the arrays are initialised by a loop
 * with the same schedule, so each thread first touches the part it later works on. One
 * warm-up pass runs first; then passes run until SECONDS have passed, each timed, and
 * bytes_per_sec is the mean rate over them (all bytes over all their time). At the end the
 * arrays are checked against the values they must hold (STREAM's check); a failure is
 * reported on stderr with exit status 1.
 *
 * Plain stores only: no non-temporal stores, and GCC's loop-distribution pass is turned off
 * for this file so that the copy loop is not replaced by a call to memcpy (which, for large
 * arrays, uses non-temporal stores).
 */
#pragma GCC optimize("no-tree-loop-distribute-patterns")

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCALAR 3.0
#define INIT_A 1.0
#define INIT_B 2.0
#define INIT_C 0.5
#define EPSILON 1e-13

enum kernel { K_READ, K_WRITE, K_COPY, K_SCALE, K_ADD, K_TRIAD, K_COUNT };
static const char *const NAMES[K_COUNT] = {"read", "write", "copy", "scale", "add", "triad"};
static const int ARRAYS[K_COUNT] = {1, 1, 2, 2, 3, 3};

static void usage(const char *msg) {
    fprintf(stderr, "stream_ref: %s\n", msg);
    fprintf(stderr, "usage: stream_ref KERNEL ELEMENTS THREADS SECONDS\n"
                    "  KERNEL: read | write | copy | scale | add | triad\n");
    exit(2);
}

static double *alloc_array(size_t n) {
    size_t bytes = n * sizeof(double);
    bytes = (bytes + 63) / 64 * 64; /* aligned_alloc wants a multiple of the alignment */
    double *p = aligned_alloc(64, bytes);
    if (!p) {
        fprintf(stderr, "stream_ref: cannot allocate %zu bytes\n", bytes);
        exit(2);
    }
    return p;
}

static double write_value(long pass) { return 1.0 + (double)(pass % 1024); }

/* One pass of kernel k; returns the sum for read (0 otherwise). */
static double run_pass(int k, double *restrict a, double *restrict b, double *restrict c,
                       size_t n, long pass) {
    const double q = SCALAR;
    double sum = 0.0;
    switch (k) {
    case K_READ: {
        /* Eight partial sums so the additions vectorise (as in the Rust kernel). */
        size_t blocks = n / 8;
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
#pragma omp parallel for schedule(static) reduction(+ : s0, s1, s2, s3, s4, s5, s6, s7)
        for (size_t i = 0; i < blocks; i++) {
            const double *p = a + 8 * i;
            s0 += p[0]; s1 += p[1]; s2 += p[2]; s3 += p[3];
            s4 += p[4]; s5 += p[5]; s6 += p[6]; s7 += p[7];
        }
        sum = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
        for (size_t j = blocks * 8; j < n; j++)
            sum += a[j];
        break;
    }
    case K_WRITE: {
        const double v = write_value(pass);
#pragma omp parallel for schedule(static)
        for (size_t j = 0; j < n; j++)
            a[j] = v;
        break;
    }
    case K_COPY:
#pragma omp parallel for schedule(static)
        for (size_t j = 0; j < n; j++)
            c[j] = a[j];
        break;
    case K_SCALE:
#pragma omp parallel for schedule(static)
        for (size_t j = 0; j < n; j++)
            b[j] = q * c[j];
        break;
    case K_ADD:
#pragma omp parallel for schedule(static)
        for (size_t j = 0; j < n; j++)
            c[j] = a[j] + b[j];
        break;
    case K_TRIAD:
#pragma omp parallel for schedule(static)
        for (size_t j = 0; j < n; j++)
            a[j] = b[j] + q * c[j];
        break;
    }
    return sum;
}

/* STREAM's check: average absolute error relative to the expected value. */
static int close_to(const char *name, const double *x, size_t n, double expected) {
    double err = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : err)
    for (size_t j = 0; j < n; j++)
        err += fabs(x[j] - expected);
    double rel = err / (double)n / fabs(expected);
    if (rel > EPSILON) {
        fprintf(stderr, "stream_ref: array %s fails validation: expected %g, avg rel error %g\n",
                name, expected, rel);
        return 0;
    }
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 5)
        usage("expected 4 arguments");
    int k = -1;
    for (int i = 0; i < K_COUNT; i++)
        if (strcmp(argv[1], NAMES[i]) == 0)
            k = i;
    if (k < 0)
        usage("unknown kernel");
    char *end;
    errno = 0;
    unsigned long long n_arg = strtoull(argv[2], &end, 10);
    if (errno || *end || n_arg == 0)
        usage("ELEMENTS must be a positive integer");
    long threads = strtol(argv[3], &end, 10);
    if (*end || threads < 1 || threads > 1024)
        usage("THREADS must be an integer in 1..1024");
    double seconds = strtod(argv[4], &end);
    if (*end || !(seconds > 0))
        usage("SECONDS must be a positive number");
    size_t n = (size_t)n_arg;
    omp_set_dynamic(0);
    omp_set_num_threads((int)threads);

    double *a = alloc_array(n), *b = alloc_array(n), *c = alloc_array(n);
    /* First touch with the kernels' schedule. */
#pragma omp parallel for schedule(static)
    for (size_t j = 0; j < n; j++) {
        a[j] = INIT_A;
        b[j] = INIT_B;
        c[j] = INIT_C;
    }

    long pass = 1;
    volatile double sink = run_pass(k, a, b, c, n, pass); /* warm-up */
    double bytes_per_pass = (double)n * 8.0 * ARRAYS[k];
    double total_time = 0.0;
    long passes = 0;
    double last_sum = sink;
    while (total_time < seconds) {
        pass++;
        double t0 = omp_get_wtime();
        last_sum = run_pass(k, a, b, c, n, pass);
        double t1 = omp_get_wtime();
        sink = last_sum;
        total_time += t1 - t0;
        passes++;
    }
    (void)sink;

    int ok = 1;
    switch (k) {
    case K_READ:
        ok = close_to("a", a, n, INIT_A) && fabs(last_sum - (double)n) <= EPSILON * (double)n;
        break;
    case K_WRITE: ok = close_to("a", a, n, write_value(pass)); break;
    case K_COPY: ok = close_to("a", a, n, INIT_A) && close_to("c", c, n, INIT_A); break;
    case K_SCALE: ok = close_to("c", c, n, INIT_C) && close_to("b", b, n, SCALAR * INIT_C); break;
    case K_ADD: ok = close_to("c", c, n, INIT_A + INIT_B); break;
    case K_TRIAD: ok = close_to("a", a, n, INIT_B + SCALAR * INIT_C); break;
    }

    printf("kernel=%s threads=%ld elements=%zu bytes_per_sec=%.6e passes=%ld\n", NAMES[k],
           threads, n, bytes_per_pass * (double)passes / total_time, passes);
    free(a);
    free(b);
    free(c);
    if (!ok) {
        fprintf(stderr, "stream_ref: validation failed\n");
        return 1;
    }
    return 0;
}
