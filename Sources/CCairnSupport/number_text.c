#define _GNU_SOURCE
#include <locale.h>
#include <stdlib.h>
#ifdef __APPLE__
#include <xlocale.h>
#endif
#include "CCairnSupport.h"

double cairn_strtod_posix(const char *text, char **end) {
    // One POSIX locale for the process, made on first use (newlocale is thread-safe; a race
    // makes two, and one is kept).
    static locale_t posix = (locale_t)0;
    locale_t locale = __atomic_load_n(&posix, __ATOMIC_ACQUIRE);
    if (locale == (locale_t)0) {
        locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
        locale_t expected = (locale_t)0;
        if (!__atomic_compare_exchange_n(&posix, &expected, locale, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            freelocale(locale);
            locale = expected;
        }
    }
    if (locale == (locale_t)0) {
        *end = (char *)text;  // no locale: nothing read, the caller takes its general path
        return 0;
    }
    return strtod_l(text, end, locale);
}
