/* prog_regions: user regions through pioscope.h (nothing linked): nesting, calls inside
 * regions, an unmatched end, and nesting deeper than the region stack. Runs the same with and
 * without the tracer. check_raw scenario "regions".
 * usage: prog_regions DIR */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "pioscope.h"

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    char path[4096];
    snprintf(path, sizeof path, "%s/regions.bin", argv[1]);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) return 1;
    pioscope_region_begin("outer");
    pwrite(fd, "a", 1, 0);
    pioscope_region_begin("inner");
    pwrite(fd, "b", 1, 1);
    pwrite(fd, "c", 1, 2);
    pioscope_region_end();
    pioscope_region_end();
    pioscope_region_end();  /* unmatched: ignored */
    for (int i = 0; i < 70; i++) pioscope_region_begin("deep");
    pwrite(fd, "d", 1, 100);
    for (int i = 0; i < 70; i++) pioscope_region_end();
    pwrite(fd, "z", 1, 200);
    close(fd);
    return 0;
}
