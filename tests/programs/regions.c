/* regions: user phases marked with pioscope.h; an "output" region holding a "write" region
 * around two pwrite calls, then a close outside any region.  usage: regions DIR */
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
    pioscope_region_begin("output");
    pioscope_region_begin("write");
    pwrite(fd, "ab", 2, 0);
    pwrite(fd, "cd", 2, 2);
    pioscope_region_end();
    pioscope_region_end();
    close(fd);
    return 0;
}
