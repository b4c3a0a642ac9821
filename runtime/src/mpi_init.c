/* mpi_init.c: the MPI lifecycle: MPI_Init, MPI_Init_thread, MPI_Finalize and MPI_Abort, what the
 * tracer sets up after init (rank, job facts, communicator cache, private communicator, clock
 * sync) and winds down before finalize. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mpi_common.h"

extern char **environ;

static int started;  /* the post-init work ran */
static int finished; /* the pre-finalize work ran */
static MPI_Comm private_comm = MPI_COMM_NULL; /* all of the tracer's own MPI traffic */

static const char *thread_level_name(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
    default: return "unknown";
    }
}

#ifdef OPEN_MPI
/* Open MPI's MCA frameworks that make up its MPI-IO: the io component (ompio or romio321) and
 * OMPIO's own parts (collective algorithm, file-system and byte-transfer layers, shared file
 * pointers). A variable OMPI_MCA_<framework> or OMPI_MCA_<framework>_<param> sets them. */
static const char *const OMPI_IO_FRAMEWORKS[] = {"io", "fcoll", "fbtl", "fs", "sharedfp"};

/* True when the environment entry `entry` (NAME=value) sets a parameter of an MPI-IO framework:
 * what `mpirun --mca io romio321` or `export OMPI_MCA_fcoll=vulcan` become in each rank. */
static int sets_ompi_io_parameter(const char *entry)
{
    static const char prefix[] = "OMPI_MCA_";
    if (strncmp(entry, prefix, sizeof prefix - 1) != 0)
        return 0;
    const char *name = entry + sizeof prefix - 1;
    for (size_t i = 0; i < sizeof OMPI_IO_FRAMEWORKS / sizeof *OMPI_IO_FRAMEWORKS; i++) {
        size_t n = strlen(OMPI_IO_FRAMEWORKS[i]);
        if (strncmp(name, OMPI_IO_FRAMEWORKS[i], n) == 0 && (name[n] == '=' || name[n] == '_'))
            return 1;
    }
    return 0;
}
#endif

/* The MPI-IO implementation in force and the parameters that chose or tuned it, as the JOB
 * facts mpi_io and mpi_io_params (docs/RUNTIME.md). MPICH's MPI-IO is ROMIO, tuned by the file
 * of default hints named in ROMIO_HINTS. Open MPI picks a component of its io framework when a
 * file is opened: OMPIO (the highest priority) unless the selection excludes it, as
 * `--mca io romio321` or `--mca io ^ompio` do. The hints each file got are SETTINGS records. */
#ifdef OPEN_MPI
static void write_mpi_io_facts(void)
{
    char params[1024] = "";
    size_t used = 0;
    const char *io = getenv("OMPI_MCA_io");
    int excluding = io && io[0] == '^';
    int names_ompio = io && strstr(io, "ompio") != NULL;
    int ompio = !io || !io[0] || (excluding ? !names_ompio : names_ompio);
    pioscope_write_job_fact("mpi_io", ompio ? "OMPIO" : "ROMIO");
    for (char **e = environ; e && *e; e++)
        if (sets_ompi_io_parameter(*e) && used + strlen(*e) + 2 < sizeof params)
            used += (size_t)snprintf(params + used, sizeof params - used, "%s%s",
                                     used ? " " : "", *e);
    pioscope_write_job_fact("mpi_io_params", params);
}
#else
static void write_mpi_io_facts(void)
{
    char params[1024] = "";
    const char *hints = getenv("ROMIO_HINTS");
    if (hints)
        snprintf(params, sizeof params, "ROMIO_HINTS=%s", hints);
    pioscope_write_job_fact("mpi_io", "ROMIO");
    pioscope_write_job_fact("mpi_io_params", params);
}
#endif

static void write_job_facts(void)
{
    char library[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "";
    char name[MPI_MAX_PROCESSOR_NAME + 1] = "";
    char version[32];
    int length = 0, major = 0, minor = 0, level = MPI_THREAD_SINGLE;
    PMPI_Get_library_version(library, &length);
    library[strcspn(library, "\r\n")] = '\0'; /* the first line names library and version */
    PMPI_Get_version(&major, &minor);
    snprintf(version, sizeof version, "%d.%d", major, minor);
    PMPI_Query_thread(&level);
    PMPI_Get_processor_name(name, &length);
    pioscope_write_job_fact("mpi_library", library);
    pioscope_write_job_fact("mpi_version", version);
    pioscope_write_job_fact("thread_level", thread_level_name(level));
    pioscope_write_job_fact("processor_name", name);
    write_mpi_io_facts();
}

/* After a successful MPI_Init or MPI_Init_thread (once, whichever the program called). */
static void after_init(void)
{
    if (__atomic_exchange_n(&started, 1, __ATOMIC_ACQ_REL))
        return;
    int rank = 0, size = 1;
    pioscope_internal_begin();
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    pioscope_set_rank(rank, size);
    pioscope_mpi_comms_init();
    PMPI_Comm_dup(MPI_COMM_WORLD, &private_comm);
    write_job_facts();
    pioscope_internal_end();
    pioscope_mpi_clock_sync(private_comm, PIOSCOPE_SYNC_INIT);
}

/* Before the real MPI_Finalize: the second clock sync, then everything on disk, in case the
 * process does not survive finalize. */
static void before_finalize(void)
{
    if (!__atomic_load_n(&started, __ATOMIC_ACQUIRE) ||
        __atomic_exchange_n(&finished, 1, __ATOMIC_ACQ_REL))
        return;
    pioscope_mpi_clock_sync(private_comm, PIOSCOPE_SYNC_FINALIZE);
    pioscope_internal_begin();
    if (private_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&private_comm);
    pioscope_mpi_comms_fini();
    pioscope_internal_end();
    pioscope_flush_all();
}

static void init_event(pioscope_event *ev, uint16_t func, int rc)
{
    ev->func = func;
    if (rc != MPI_SUCCESS) {
        ev->result = -1;
        ev->error = rc; /* the error class needs an initialized MPI */
    }
}

/* After the real Init or Init_thread returned rc: saves errno, records the call, sets the
 * tracer up if MPI is, restores errno and returns rc. */
static int init_end(pioscope_call *call, const pioscope_target *target, int rc)
{
    int saved_errno = errno;
    pioscope_stop(call);
    pioscope_event ev = {0};
    init_event(&ev, target->func, rc);
    pioscope_leave(call, &ev);
    if (rc == MPI_SUCCESS)
        after_init();
    errno = saved_errno;
    return rc;
}

PIOSCOPE_MPI_WRAPPER(MPI_Init, (int *argc, char ***argv))
{
    pioscope_call call;
    __typeof__(&PMPI_Init) real = pioscope_begin(&call, &target_MPI_Init);
    if (!real)
        return MPI_ERR_INTERN;
    int rc = real(argc, argv);
    return init_end(&call, &target_MPI_Init, rc);
}

PIOSCOPE_MPI_WRAPPER(MPI_Init_thread, (int *argc, char ***argv, int required, int *provided))
{
    pioscope_call call;
    __typeof__(&PMPI_Init_thread) real = pioscope_begin(&call, &target_MPI_Init_thread);
    if (!real)
        return MPI_ERR_INTERN;
    int rc = real(argc, argv, required, provided);
    return init_end(&call, &target_MPI_Init_thread, rc);
}

/* The record covers the real finalize only; the clock sync and flush before it are not in it. */
PIOSCOPE_MPI_WRAPPER(MPI_Finalize, (void))
{
    __typeof__(&PMPI_Finalize) real = pioscope_target_real(&target_MPI_Finalize);
    if (!real)
        return MPI_ERR_INTERN;
    before_finalize();
    pioscope_call call;
    pioscope_enter(&call);
    int rc = real();
    int saved_errno = errno;
    pioscope_stop(&call);
    pioscope_event ev = {0};
    init_event(&ev, target_MPI_Finalize.func, rc);
    pioscope_leave(&call, &ev);
    errno = saved_errno;
    return rc;
}

/* MPI_Abort ends the job without the exit hooks the trace is written from (MPICH's launcher
 * kills the ranks as soon as it hears of the abort), so the trace ends here, before the real
 * abort: every buffer out, then a PARTIAL chunk naming the abort. The abort itself is not
 * recorded (it has no functions.def id). */
static void *real_abort;
PIOSCOPE_MPI_ALIAS(MPI_Abort);
PIOSCOPE_EXPORT int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    __typeof__(&PMPI_Abort) real = pioscope_resolve(&real_abort, "PMPI_Abort");
    if (!real)
        return MPI_ERR_INTERN;
    int saved_errno = errno;
    char reason[64];
    snprintf(reason, sizeof reason, "MPI_Abort called with error code %d", errorcode);
    pioscope_finish(reason);
    errno = saved_errno;
    return real(comm, errorcode);
}
