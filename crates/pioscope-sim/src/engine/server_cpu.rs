//! Server CPU time, taken and reported: every span a server thread holds its CPU (a request's
//! CPU time, a memory copy) goes to the recorder, so the output trace samples the servers' CPU
//! as `pioscope run`'s sampler samples a real server's (the server table's CPU %). A server
//! colocated with the ranks (`storage.colocated`) also takes a core of their node
//! (node_cpu.rs).

use super::Sim;
use crate::program::{CpuActivity, CpuWork};

impl Sim<'_> {
    /// Server `s` needs `cost` ns of CPU for `work` from now: when it ends (the server's
    /// threads, first come first served).
    pub(super) fn server_cpu(&mut self, s: usize, cost: u64, work: CpuWork) -> u64 {
        let end = if cost > 0 && self.servers_on_node() {
            // Its thread and a core of the node, then as long as the node's load lets it run.
            let thread_free = self.servers[s].cpu_free().max(self.now);
            let (start, end) = self.server_span_on_node(thread_free, cost);
            self.servers[s].cpu(start, end - start)
        } else {
            self.servers[s].cpu(self.now, cost)
        };
        if cost > 0 {
            self.rec.server_cpu(&CpuActivity {
                server: s as u32,
                work,
                start_ns: end - cost,
                end_ns: end,
            });
        }
        end
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::run;
    use crate::engine::testutil::system;
    use crate::program::{
        Call, CpuActivity, CpuWork, DiskActivity, IoKind, Job, Op, Rank, Recorder, ServerActivity,
    };

    /// Keeps the CPU spans only.
    #[derive(Default)]
    struct Cpu(Vec<CpuActivity>);

    impl Recorder for Cpu {
        fn call(&mut self, _: Rank, _: u8, _: &Call, _: u64, _: u64) {}
        fn server(&mut self, _: &ServerActivity) {}
        fn disk(&mut self, _: &DiskActivity) {}
        fn server_cpu(&mut self, a: &CpuActivity) {
            self.0.push(a.clone());
        }
    }

    /// One client writes 64 KiB (the eager limit: no rendezvous) to one server through its
    /// write-back cache: the request's 30 µs of CPU start when the data has arrived (1 µs +
    /// 65,536 ns), then the copy into the cache, 65,536 B at 10 GB/s = 6,554 ns (rounded).
    #[test]
    fn a_request_then_its_copy_into_the_cache() {
        let mut sys = system();
        sys.storage.data_servers = 1;
        sys.storage.cpu_per_request_ns = 30_000;
        sys.storage.cache.write_back = 1 << 30;
        sys.storage.cache.dirty_limit = 1 << 30;
        sys.storage.cache.flush_rate = 1e8;
        let job = Job {
            programs: vec![vec![Op::Io {
                file: 0,
                kind: IoKind::Write,
                offset: 0,
                bytes: 65_536,
            }]],
            files: vec!["/f".into()],
            description: "test".into(),
        };
        let mut cpu = Cpu::default();
        run(&sys, &job, 1, &mut cpu).expect("run");
        let arrived = 1_000 + 65_536;
        let copied = arrived + 30_000 + 6_554;
        let spans: Vec<(u32, CpuWork, u64, u64)> = cpu
            .0
            .iter()
            .map(|a| (a.server, a.work, a.start_ns, a.end_ns))
            .collect();
        assert_eq!(
            spans,
            vec![
                (0, CpuWork::Request, arrived, arrived + 30_000),
                (0, CpuWork::Copy, arrived + 30_000, copied),
            ]
        );
    }
}
