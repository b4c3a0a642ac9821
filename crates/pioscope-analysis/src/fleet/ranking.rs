//! The fleet ranked as the summary page shows it, computed while the rows stream by: the jobs
//! with the most I/O time (a bounded heap), every finding rule with its jobs and cost summed
//! over the fleet (one entry per rule), the fleet's totals and the first failed inputs. The
//! same ranking is one SQL query over the tables (docs/FORMAT.md "Fleet tables"), which the
//! tests run with DuckDB to check this one.

use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BinaryHeap};

use super::{FindingRow, JobRow};

/// Jobs the summary ranks.
pub const TOP_JOBS: usize = 100;
/// Failed inputs the summary lists (the jobs table has them all).
pub const LISTED_ERRORS: usize = 100;

/// A profiled job in the ranking, with the order: most I/O time first, then by input.
#[derive(Clone, Debug, PartialEq)]
pub struct RankedJob(pub JobRow);

impl RankedJob {
    fn key(&self) -> (i64, Reverse<&str>) {
        let io = self.0.figures.as_ref().map_or(0, |f| f.io_ns);
        (io, Reverse(self.0.input.as_str()))
    }
}

impl Eq for RankedJob {}

impl Ord for RankedJob {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

impl PartialOrd for RankedJob {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// One finding rule over the fleet.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RuleTotals {
    /// Rule id.
    pub finding: String,
    /// Jobs with at least one finding of the rule.
    pub jobs: u64,
    /// Findings of the rule.
    pub findings: u64,
    /// Their cost summed over the fleet, ns.
    pub cost_ns: i64,
    /// The costliest one.
    pub max_cost_ns: i64,
    /// The job it was found in (input).
    pub worst_input: String,
    /// Its title.
    pub worst_title: String,
    /// Findings by severity: high, medium, low.
    pub severities: [u64; 3],
}

/// The fleet's totals.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Totals {
    /// Inputs (rows of jobs.parquet).
    pub inputs: u64,
    /// Inputs that failed.
    pub failed: u64,
    /// Findings (rows of findings.parquet).
    pub findings: u64,
    /// Bytes read over the fleet.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// I/O time, ns summed over every rank of every job.
    pub io_ns: i64,
    /// Wall time, ns summed likewise.
    pub wall_ns: i64,
}

/// The ranking, fed row by row.
#[derive(Debug, Default)]
pub struct Ranking {
    top: BinaryHeap<Reverse<RankedJob>>,
    rules: BTreeMap<String, RuleTotals>,
    errors: Vec<JobRow>,
    totals: Totals,
}

impl Ranking {
    /// An empty ranking.
    pub fn new() -> Self {
        Ranking::default()
    }

    /// Adds a job and its findings.
    pub fn add(&mut self, job: &JobRow, findings: &[FindingRow]) {
        let t = &mut self.totals;
        t.inputs += 1;
        t.findings += findings.len() as u64;
        let Some(f) = &job.figures else {
            t.failed += 1;
            if self.errors.len() < LISTED_ERRORS {
                self.errors.push(job.clone());
            }
            return;
        };
        t.bytes_read += f.bytes_read;
        t.bytes_written += f.bytes_written;
        t.io_ns += f.io_ns;
        t.wall_ns += f.wall_ns;
        self.top.push(Reverse(RankedJob(job.clone())));
        if self.top.len() > TOP_JOBS {
            self.top.pop();
        }
        let mut seen: Vec<&str> = Vec::new();
        for x in findings {
            let r = self
                .rules
                .entry(x.finding.clone())
                .or_insert_with(|| RuleTotals {
                    finding: x.finding.clone(),
                    ..RuleTotals::default()
                });
            if !seen.contains(&x.finding.as_str()) {
                seen.push(&x.finding);
                r.jobs += 1;
            }
            r.findings += 1;
            r.cost_ns += x.cost_ns;
            let worse = r.findings == 1
                || (x.cost_ns, Reverse(x.input.as_str()))
                    > (r.max_cost_ns, Reverse(r.worst_input.as_str()));
            if worse {
                r.max_cost_ns = x.cost_ns;
                r.worst_input = x.input.clone();
                r.worst_title = x.title.clone();
            }
            let s = match x.severity {
                "high" => 0,
                "medium" => 1,
                _ => 2,
            };
            r.severities[s] += 1;
        }
    }

    /// The fleet's totals.
    pub fn totals(&self) -> &Totals {
        &self.totals
    }

    /// The jobs with the most I/O time, most first (ties by input), at most [`TOP_JOBS`].
    pub fn top_jobs(&self) -> Vec<&JobRow> {
        let mut jobs: Vec<&RankedJob> = self.top.iter().map(|r| &r.0).collect();
        jobs.sort_by(|a, b| b.cmp(a));
        jobs.into_iter().map(|j| &j.0).collect()
    }

    /// Every rule found, costliest over the fleet first (ties by id).
    pub fn rules(&self) -> Vec<&RuleTotals> {
        let mut rules: Vec<&RuleTotals> = self.rules.values().collect();
        rules.sort_by(|a, b| {
            b.cost_ns
                .cmp(&a.cost_ns)
                .then_with(|| a.finding.cmp(&b.finding))
        });
        rules
    }

    /// The first failed inputs, in the order they came (at most [`LISTED_ERRORS`]).
    pub fn errors(&self) -> &[JobRow] {
        &self.errors
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::{failed, InputKind, JobFigures};

    fn job(input: &str, io_ns: i64) -> JobRow {
        let mut j = failed(input, InputKind::Trace, input, String::new());
        j.error = None;
        j.figures = Some(JobFigures {
            io_ns,
            wall_ns: 10 * io_ns,
            bytes_read: 5,
            ..JobFigures::default()
        });
        j
    }

    fn finding(input: &str, id: &str, cost_ns: i64) -> FindingRow {
        FindingRow {
            input: input.into(),
            job: input.into(),
            position: 1,
            finding: id.into(),
            severity: "high",
            title: format!("{id} in {input}"),
            cost_ns,
            cost_share: None,
        }
    }

    #[test]
    fn keeps_the_top_jobs_and_sums_every_rule() {
        let mut r = Ranking::new();
        for i in 0..(TOP_JOBS as i64 + 50) {
            let input = format!("job{i:04}");
            let f = [finding(&input, "a", i), finding(&input, "a", 1)];
            r.add(&job(&input, i % 7), &f);
        }
        r.add(
            &failed("bad", InputKind::Darshan, "bad", "damaged".into()),
            &[],
        );
        let top = r.top_jobs();
        assert_eq!(top.len(), TOP_JOBS);
        // io 6 first, ties by input: job0006, job0013, ...
        assert_eq!(top[0].input, "job0006");
        assert_eq!(top[1].input, "job0013");
        let rules = r.rules();
        assert_eq!(rules.len(), 1);
        let n = TOP_JOBS as i64 + 50;
        assert_eq!(rules[0].jobs, n as u64);
        assert_eq!(rules[0].findings, 2 * n as u64);
        assert_eq!(rules[0].cost_ns, n * (n - 1) / 2 + n);
        assert_eq!(rules[0].worst_input, format!("job{:04}", n - 1));
        let t = r.totals();
        assert_eq!(
            (t.inputs, t.failed, t.bytes_read),
            (n as u64 + 1, 1, 5 * n as u64)
        );
        assert_eq!(r.errors()[0].input, "bad");
    }
}
