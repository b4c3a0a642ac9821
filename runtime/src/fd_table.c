/* fd_table.c: owns the fd table's memory (one mmap at init; see fd_table.h for its use). */
#include "fd_table.h"
#include "sys.h"

pioscope_fd_entry *pioscope_fds PIOSCOPE_HIDDEN;

int pioscope_fd_table_init(void)
{
    if (pioscope_fds) return 0;
    pioscope_fds = pio_mmap_anon(sizeof(pioscope_fd_entry) * PIOSCOPE_FD_MAX);
    return pioscope_fds ? 0 : -1;
}
