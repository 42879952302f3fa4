/*
 * SQL math functions for perflab's SQLite connections: sin, cos, sqrt, pi and the rest of
 * the set the sqlite3 shell has when SQLite is built with SQLITE_ENABLE_MATH_FUNCTIONS.
 * The scan workload's complex predicate needs them (src/workload/scan/predicate.rs). They
 * are compiled by perflab's build script and registered on each connection perflab opens,
 * so every build of perflab has them, `cargo install` included; being C functions called
 * by SQLite's virtual machine, they cost what SQLite's own would.
 *
 * The rules are SQLite's: a NULL or non-numeric argument gives NULL, as does a result
 * outside the function's domain (the square root of -1, the log of 0); ceil, floor and
 * trunc of an integer give the integer.
 */
#include <math.h>
#include <stdint.h>
#include "sqlite3.h"

enum op {
    ACOS, ACOSH, ASIN, ASINH, ATAN, ATANH, COS, COSH, SIN, SINH, TAN, TANH,
    EXP, LN, LOG10, LOG2, SQRT, DEGREES, RADIANS, CEIL, FLOOR, TRUNC
};

/* The argument as a double; 0 when it is NULL or not a number. */
static int number(sqlite3_value *v, double *out) {
    switch (sqlite3_value_numeric_type(v)) {
    case SQLITE_INTEGER:
    case SQLITE_FLOAT:
        *out = sqlite3_value_double(v);
        return 1;
    default:
        return 0;
    }
}

static void result(sqlite3_context *ctx, double r) {
    if (!isnan(r)) {
        sqlite3_result_double(ctx, r);
    }
}

static void one(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    double x;
    enum op op = (enum op)(intptr_t)sqlite3_user_data(ctx);
    (void)argc;
    if ((op == CEIL || op == FLOOR || op == TRUNC)
        && sqlite3_value_type(argv[0]) == SQLITE_INTEGER) {
        sqlite3_result_int64(ctx, sqlite3_value_int64(argv[0]));
        return;
    }
    if (!number(argv[0], &x)) {
        return;
    }
    switch (op) {
    case ACOS: result(ctx, acos(x)); break;
    case ACOSH: result(ctx, acosh(x)); break;
    case ASIN: result(ctx, asin(x)); break;
    case ASINH: result(ctx, asinh(x)); break;
    case ATAN: result(ctx, atan(x)); break;
    case ATANH: result(ctx, atanh(x)); break;
    case COS: result(ctx, cos(x)); break;
    case COSH: result(ctx, cosh(x)); break;
    case SIN: result(ctx, sin(x)); break;
    case SINH: result(ctx, sinh(x)); break;
    case TAN: result(ctx, tan(x)); break;
    case TANH: result(ctx, tanh(x)); break;
    case EXP: result(ctx, exp(x)); break;
    case LN: if (x > 0) result(ctx, log(x)); break;
    case LOG10: if (x > 0) result(ctx, log10(x)); break;
    case LOG2: if (x > 0) result(ctx, log2(x)); break;
    case SQRT: if (x >= 0) result(ctx, sqrt(x)); break;
    case DEGREES: result(ctx, x * 180.0 / M_PI); break;
    case RADIANS: result(ctx, x * M_PI / 180.0); break;
    case CEIL: result(ctx, ceil(x)); break;
    case FLOOR: result(ctx, floor(x)); break;
    case TRUNC: result(ctx, trunc(x)); break;
    }
}

/* The hot ones of the complex predicate, each its own function: no dispatch per row. */
#define UNARY(name, expr)                                                        \
    static void name##_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv) { \
        double x;                                                                \
        (void)argc;                                                              \
        if (number(argv[0], &x)) {                                               \
            result(ctx, expr);                                                   \
        }                                                                        \
    }
UNARY(sin, sin(x))
UNARY(cos, cos(x))
UNARY(sqrt, x >= 0 ? sqrt(x) : NAN)

/* log(X) is the base-10 logarithm; log(B, X) the base-B one. */
static void logarithm(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    double b = 10.0, x;
    if (argc == 2 && !number(argv[0], &b)) {
        return;
    }
    if (!number(argv[argc - 1], &x) || x <= 0 || b <= 0 || b == 1.0) {
        return;
    }
    result(ctx, argc == 2 ? log(x) / log(b) : log10(x));
}

enum op2 { ATAN2, MOD, POW };

static void two(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    double a, b;
    enum op2 op = (enum op2)(intptr_t)sqlite3_user_data(ctx);
    (void)argc;
    if (!number(argv[0], &a) || !number(argv[1], &b)) {
        return;
    }
    switch (op) {
    case ATAN2: result(ctx, atan2(a, b)); break;
    case MOD: if (b != 0.0) result(ctx, fmod(a, b)); break;
    case POW: result(ctx, pow(a, b)); break;
    }
}

static void pi(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    (void)argv;
    sqlite3_result_double(ctx, M_PI);
}

/* Registers every function on `db`; SQLITE_OK, or the first error. */
int perflab_sqlite_math(sqlite3 *db) {
    static const struct { const char *name; enum op op; } ones[] = {
        {"acos", ACOS}, {"acosh", ACOSH}, {"asin", ASIN}, {"asinh", ASINH},
        {"atan", ATAN}, {"atanh", ATANH}, {"cos", COS}, {"cosh", COSH},
        {"sin", SIN}, {"sinh", SINH}, {"tan", TAN}, {"tanh", TANH},
        {"exp", EXP}, {"ln", LN}, {"log10", LOG10}, {"log2", LOG2},
        {"sqrt", SQRT}, {"degrees", DEGREES}, {"radians", RADIANS},
        {"ceil", CEIL}, {"ceiling", CEIL}, {"floor", FLOOR}, {"trunc", TRUNC},
    };
    static const struct { const char *name; enum op2 op; } twos[] = {
        {"atan2", ATAN2}, {"mod", MOD}, {"pow", POW}, {"power", POW},
    };
    const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
    int rc = SQLITE_OK;
    for (unsigned i = 0; rc == SQLITE_OK && i < sizeof ones / sizeof ones[0]; i++) {
        rc = sqlite3_create_function(db, ones[i].name, 1, flags,
                                     (void *)(intptr_t)ones[i].op, one, 0, 0);
    }
    for (unsigned i = 0; rc == SQLITE_OK && i < sizeof twos / sizeof twos[0]; i++) {
        rc = sqlite3_create_function(db, twos[i].name, 2, flags,
                                     (void *)(intptr_t)twos[i].op, two, 0, 0);
    }
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "log", 1, flags, 0, logarithm, 0, 0);
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "log", 2, flags, 0, logarithm, 0, 0);
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "pi", 0, flags, 0, pi, 0, 0);
    /* Registered last, so they replace the general ones of the same names. */
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "sin", 1, flags, 0, sin_fn, 0, 0);
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "cos", 1, flags, 0, cos_fn, 0, 0);
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "sqrt", 1, flags, 0, sqrt_fn, 0, 0);
    return rc;
}
