//! The server tables of the two runs lined up (`pioscope compare`): each trace's table of
//! `stats --by server` (loads only), rows paired, and per column the observed value, the
//! expected (simulated) one and the model's relative error, (expected - observed) / observed.
//!
//! Pairing: a server of the same name on both sides first (a simulation of a simulation, two
//! runs on the same lab); the rest by role, then position in name order (a real `brick-1` and a
//! simulated `server-1` are both the second data server). A row left over on one side is shown
//! alone, without errors.

use serde::Serialize;

use crate::servers::{ServerRow, ServerTable};

/// A column of the server table that is compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerColumn {
    /// Network operations per second of the job.
    NetworkOpsPerSec,
    /// Storage operations per second of the job.
    StorageOpsPerSec,
    /// Storage operations that moved data.
    StorageAccesses,
    /// Bytes per storage access.
    BytesPerAccess,
    /// Mean sampled CPU, percent of one core.
    CpuPercent,
    /// Storage bytes per second of busy time.
    Throughput,
    /// Busy time / job duration.
    BusyFraction,
}

impl ServerColumn {
    /// Every compared column, in the order of the server table.
    pub const ALL: [ServerColumn; 7] = [
        ServerColumn::NetworkOpsPerSec,
        ServerColumn::StorageOpsPerSec,
        ServerColumn::StorageAccesses,
        ServerColumn::BytesPerAccess,
        ServerColumn::CpuPercent,
        ServerColumn::Throughput,
        ServerColumn::BusyFraction,
    ];

    /// The column's value in a row (None where the table shows `-`).
    pub fn value(self, r: &ServerRow) -> Option<f64> {
        match self {
            ServerColumn::NetworkOpsPerSec => Some(r.network_ops_per_sec),
            ServerColumn::StorageOpsPerSec => Some(r.storage_ops_per_sec),
            ServerColumn::StorageAccesses => Some(r.storage_accesses as f64),
            ServerColumn::BytesPerAccess => r.bytes_per_access,
            ServerColumn::CpuPercent => r.cpu_percent,
            ServerColumn::Throughput => r.throughput,
            ServerColumn::BusyFraction => Some(r.busy_fraction),
        }
    }
}

/// How a pair of rows was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PairedBy {
    /// The same server name on both sides.
    Name,
    /// The same role and position in name order.
    Position,
    /// No counterpart.
    Unpaired,
}

/// One column of one pair.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ColumnValues {
    /// Which column.
    pub column: ServerColumn,
    /// The observed value.
    pub observed: Option<f64>,
    /// The simulated value.
    pub expected: Option<f64>,
    /// (expected - observed) / observed; 0 when both are equal, null when either is missing
    /// or only the observed value is 0.
    pub error: Option<f64>,
}

/// One observed server and its simulated counterpart.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ServerPair {
    /// The observed server's name.
    pub observed: Option<String>,
    /// The simulated server's name.
    pub simulated: Option<String>,
    /// Their role (the observed one's when both are known).
    pub role: Option<String>,
    /// How they were paired.
    pub paired_by: PairedBy,
    /// Every column of `ServerColumn::ALL`.
    pub columns: Vec<ColumnValues>,
}

/// One column over every pair.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ColumnSummary {
    /// Which column.
    pub column: ServerColumn,
    /// Pairs with an error.
    pub pairs: u32,
    /// Median of |error|.
    pub median_abs_error: Option<f64>,
    /// The error of largest magnitude (with its sign).
    pub worst_error: Option<f64>,
}

/// The two server tables side by side.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ServerComparison {
    /// Servers of the observed trace.
    pub observed_servers: u32,
    /// Servers of the simulated trace.
    pub simulated_servers: u32,
    /// Pairs (then rows of one side alone), in the observed table's order.
    pub servers: Vec<ServerPair>,
    /// Per column over the pairs.
    pub columns: Vec<ColumnSummary>,
}

/// The model's relative error.
fn error(observed: Option<f64>, expected: Option<f64>) -> Option<f64> {
    let (o, e) = (observed?, expected?);
    if o == e {
        Some(0.0)
    } else {
        (o != 0.0).then(|| (e - o) / o)
    }
}

fn pair(o: Option<&ServerRow>, s: Option<&ServerRow>, paired_by: PairedBy) -> ServerPair {
    ServerPair {
        observed: o.map(|r| r.server.clone()),
        simulated: s.map(|r| r.server.clone()),
        role: o.and_then(|r| r.role.clone()).or_else(|| s?.role.clone()),
        paired_by,
        columns: ServerColumn::ALL
            .iter()
            .map(|&column| {
                let observed = o.and_then(|r| column.value(r));
                let expected = s.and_then(|r| column.value(r));
                ColumnValues {
                    column,
                    observed,
                    expected,
                    error: error(observed, expected),
                }
            })
            .collect(),
    }
}

/// Lines up the rows of `observed` and `simulated` (see the module notes).
pub fn line_up(observed: &ServerTable, simulated: &ServerTable) -> ServerComparison {
    let mut sim_used = vec![false; simulated.servers.len()];
    let mut paired: Vec<Option<(usize, PairedBy)>> = observed
        .servers
        .iter()
        .map(|o| {
            let k = simulated
                .servers
                .iter()
                .position(|s| s.server == o.server)?;
            sim_used[k] = true;
            Some((k, PairedBy::Name))
        })
        .collect();
    for (i, o) in observed.servers.iter().enumerate() {
        if paired[i].is_some() {
            continue;
        }
        let k = (0..simulated.servers.len())
            .find(|&k| !sim_used[k] && simulated.servers[k].role == o.role);
        if let Some(k) = k {
            sim_used[k] = true;
            paired[i] = Some((k, PairedBy::Position));
        }
    }
    let mut servers: Vec<ServerPair> = observed
        .servers
        .iter()
        .zip(&paired)
        .map(|(o, p)| match p {
            Some((k, by)) => pair(Some(o), Some(&simulated.servers[*k]), *by),
            None => pair(Some(o), None, PairedBy::Unpaired),
        })
        .collect();
    servers.extend(
        simulated
            .servers
            .iter()
            .zip(&sim_used)
            .filter(|(_, used)| !**used)
            .map(|(s, _)| pair(None, Some(s), PairedBy::Unpaired)),
    );
    let columns = ServerColumn::ALL
        .iter()
        .enumerate()
        .map(|(c, &column)| {
            let mut errors: Vec<f64> = servers.iter().filter_map(|p| p.columns[c].error).collect();
            let worst = errors
                .iter()
                .copied()
                .reduce(|a, b| if b.abs() > a.abs() { b } else { a });
            let mut abs: Vec<f64> = errors.iter_mut().map(|e| e.abs()).collect();
            ColumnSummary {
                column,
                pairs: abs.len() as u32,
                median_abs_error: super::median(&mut abs),
                worst_error: worst,
            }
        })
        .collect();
    ServerComparison {
        observed_servers: observed.servers.len() as u32,
        simulated_servers: simulated.servers.len() as u32,
        servers,
        columns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(server: &str, role: &str, net: f64, cpu: Option<f64>) -> ServerRow {
        ServerRow {
            server: server.into(),
            role: Some(role.into()),
            network_ops: 0,
            network_bytes: 0,
            network_ops_per_sec: net,
            storage_ops: 0,
            storage_ops_per_sec: 0.0,
            storage_accesses: 10,
            storage_bytes: 0,
            bytes_per_access: Some(4096.0),
            storage_time_ns: 0,
            cpu_percent: cpu,
            cpu_peak_percent: cpu,
            throughput: None,
            busy_ns: 0,
            busy_fraction: 0.5,
        }
    }

    fn table(rows: Vec<ServerRow>) -> ServerTable {
        ServerTable {
            servers: rows,
            ..ServerTable::default()
        }
    }

    /// Two observed bricks against a simulation with two data servers and a metadata server:
    /// paired by role and position; the metadata server is left alone.
    #[test]
    fn pairs_by_role_and_position_with_relative_errors() {
        let obs = table(vec![
            row("brick-0", "data", 100.0, Some(20.0)),
            row("brick-1", "data", 200.0, None),
        ]);
        let sim = table(vec![
            row("server-0", "data", 150.0, Some(10.0)),
            row("server-1", "data", 100.0, Some(5.0)),
            row("server-2", "metadata", 8.0, Some(1.0)),
        ]);
        let c = line_up(&obs, &sim);
        assert_eq!((c.observed_servers, c.simulated_servers), (2, 3));
        let names: Vec<(Option<&str>, Option<&str>, PairedBy)> = c
            .servers
            .iter()
            .map(|p| (p.observed.as_deref(), p.simulated.as_deref(), p.paired_by))
            .collect();
        assert_eq!(
            names,
            vec![
                (Some("brick-0"), Some("server-0"), PairedBy::Position),
                (Some("brick-1"), Some("server-1"), PairedBy::Position),
                (None, Some("server-2"), PairedBy::Unpaired),
            ]
        );
        let net = |p: &ServerPair| p.columns[0].error;
        assert_eq!(net(&c.servers[0]), Some(0.5));
        assert_eq!(net(&c.servers[1]), Some(-0.5));
        assert_eq!(net(&c.servers[2]), None);
        let cpu = ServerColumn::ALL
            .iter()
            .position(|&k| k == ServerColumn::CpuPercent)
            .expect("cpu");
        assert_eq!(c.servers[0].columns[cpu].error, Some(-0.5));
        assert_eq!(c.servers[1].columns[cpu].error, None, "no observed CPU");
        assert_eq!(c.columns[0].pairs, 2);
        assert_eq!(c.columns[0].median_abs_error, Some(0.5));
        assert_eq!(c.columns[0].worst_error, Some(0.5));
        assert_eq!(c.columns[cpu].pairs, 1);
    }

    /// A table against itself: paired by name, every error 0.
    #[test]
    fn a_table_against_itself_has_no_error() {
        let t = table(vec![
            row("server-0", "data", 100.0, Some(20.0)),
            row("server-1", "metadata", 0.0, None),
        ]);
        let c = line_up(&t, &t);
        assert!(c.servers.iter().all(|p| p.paired_by == PairedBy::Name));
        for p in &c.servers {
            for v in &p.columns {
                assert!(
                    v.error == Some(0.0) || (v.observed.is_none() && v.expected.is_none()),
                    "{:?}",
                    v
                );
            }
        }
        assert!(c
            .columns
            .iter()
            .all(|s| s.worst_error.is_none_or(|e| e == 0.0)));
    }
}
