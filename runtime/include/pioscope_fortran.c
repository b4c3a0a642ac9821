/* pioscope_fortran.c: the C shim behind the Fortran module pioscope (pioscope.f90): turns a
 * Fortran string (pointer + length, no NUL) into a C string and calls pioscope.h. */
#include <string.h>

#include "pioscope.h"

void pioscope_fortran_region_begin(const char *name, int length);
void pioscope_fortran_region_end(void);

void pioscope_fortran_region_begin(const char *name, int length)
{
    char text[256];
    size_t n = length < 0 ? 0 : (size_t)length;
    if (n > sizeof text - 1) n = sizeof text - 1;
    memcpy(text, name, n);
    text[n] = 0;
    pioscope_region_begin(text);
}

void pioscope_fortran_region_end(void)
{
    pioscope_region_end();
}
