//! The CPU cost of a FUSE file system's daemons on the calibrated machine, as `pioscope
//! calibrate` measures it (its client daemon's and its colocated servers' CPU time per write
//! request and per byte), and how it becomes the model's node CPU: the client stack's costs
//! (`nodes.client_cpu_*`) and servers on the node (`storage.colocated`). docs/MODEL.md,
//! "Calibration".

use serde::{Deserialize, Serialize};

use crate::model::calibrate::remaining_rate;
use crate::model::System;

/// CPU time of the daemons of the FUSE mount measured, from sequential writes of two sizes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DaemonCpu {
    /// The FUSE client daemon: seconds per write request.
    pub client_per_request_s: f64,
    /// The FUSE client daemon: seconds per byte written.
    pub client_per_byte_s: f64,
    /// The file system's server daemons found on this machine (0: its servers are elsewhere).
    pub servers: u32,
    /// Those servers together: seconds per write request.
    pub server_per_request_s: f64,
    /// Those servers together: seconds per byte written.
    pub server_per_byte_s: f64,
}

impl DaemonCpu {
    /// Moves the client daemon's share of one rank's write out of the fitted server line into
    /// the node's client CPU, so one rank's write still takes what was measured while ranks
    /// writing at once now share the node's cores; servers found here run on the node too.
    pub fn apply(&self, system: &mut System) {
        let client_ns = (self.client_per_request_s * 1e9).round().max(0.0) as u64;
        let client_bw = if self.client_per_byte_s > 0.0 {
            1.0 / self.client_per_byte_s
        } else {
            0.0
        };
        system.nodes.client_cpu_per_request_ns = client_ns;
        system.nodes.client_cpu_bandwidth = client_bw;
        let st = &mut system.storage;
        st.colocated = self.servers > 0;
        st.cpu_per_request_ns = st.cpu_per_request_ns.saturating_sub(client_ns);
        let c = &mut st.cache;
        for rate in [&mut c.memory_bandwidth, &mut c.rewrite_memory_bandwidth] {
            if *rate > 0.0 && client_bw > 0.0 {
                // A client at least as slow as the total leaves the copy no time (1 TB/s).
                *rate = remaining_rate(*rate, client_bw);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::load;

    /// A client daemon of 10 µs per request and 1 GB/s takes its share out of a server line of
    /// 30 µs and 500 MB/s (20 µs and 1 GB/s left); a server here makes the servers colocated.
    #[test]
    fn client_share_out_of_the_server_line() {
        let mut s = load::system("pvfs2-2009", &[]).expect("preset");
        s.storage.cpu_per_request_ns = 30_000;
        s.storage.cache.memory_bandwidth = 5e8;
        s.storage.cache.rewrite_memory_bandwidth = 0.0;
        DaemonCpu {
            client_per_request_s: 10e-6,
            client_per_byte_s: 1e-9,
            servers: 1,
            server_per_request_s: 5e-6,
            server_per_byte_s: 0.0,
        }
        .apply(&mut s);
        assert_eq!(s.nodes.client_cpu_per_request_ns, 10_000);
        assert!((s.nodes.client_cpu_bandwidth - 1e9).abs() < 1e-3);
        assert_eq!(s.storage.cpu_per_request_ns, 20_000);
        assert!((s.storage.cache.memory_bandwidth - 1e9).abs() < 1e-3);
        assert_eq!(s.storage.cache.rewrite_memory_bandwidth, 0.0);
        assert!(s.storage.colocated);
    }
}
