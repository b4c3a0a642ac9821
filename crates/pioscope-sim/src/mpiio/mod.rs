//! MPI-IO on the simulated machine: ROMIO's strategies compiling calls into engine `Op`s
//! (`romio`), generated benchmark workloads (`workload`), the replay of a traced run
//! (`replay`), and the trace store a simulated run writes (`output`, with the servers' sampled
//! CPU from `server_counters`).

pub mod output;
pub mod replay;
pub mod romio;
pub mod server_counters;
pub mod workload;
