/* region_probe: N one-byte pwrite calls inside one region open the whole run, the worst case
 * of merge's reorder buffer (the region's record comes last and starts first, so every call
 * waits for it: merge_scale.py --enclosed).
 * usage: region_probe N FILE */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "pioscope.h"

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    long n = atol(argv[1]);
    int fd = open(argv[2], O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) return 1;
    char c = 'x';
    pioscope_region_begin("all");
    for (long i = 0; i < n; i++)
        if (pwrite(fd, &c, 1, i % 4096) != 1) return 1;
    pioscope_region_end();
    close(fd);
    return 0;
}
